"""Pants plugin entry point for witness-gate."""


def target_types():
    return []


def rules():
    return []
