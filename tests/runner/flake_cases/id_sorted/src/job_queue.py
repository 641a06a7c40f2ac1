"""A print-job queue: jobs run by priority, and among equal priorities in submission order."""

from __future__ import annotations


class Job:
    def __init__(self, name: str, priority: int) -> None:
        self.name = name
        self.priority = priority


def run_order(submitted: list[dict]) -> list[str]:
    jobs = [Job(entry["name"], entry["priority"]) for entry in submitted]
    # bug: id() as the tie-breaker, taken for a creation counter; it is a memory address
    return [job.name for job in sorted(jobs, key=lambda job: (-job.priority, id(job)))]
