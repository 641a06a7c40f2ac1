#!/bin/sh
echo "@remote_coverage_tools is an offline stub (bazel/remote_coverage_tools): coverage is not available" >&2
exit 1
