"""The worker: the side of the trust boundary that runs user code.

Every module here runs inside a worker interpreter (`sandbox` starts it), next to the
code under test, and decides nothing: `process_id` (the pid the runner chose, before
anything loads), `main` (the main loop: one request, its messages), `property_module` and
`pytest_module` (importing and calling the two kinds of property module) and
`heap_layout` (where a forked replay's objects land). What the two sides say to each
other is `witness_gate.protocol`. The deciding side never imports this package
(tests/runner/trust_boundary_test.py): a worker's modules are loaded only where user code
may run.

Importing the package loads nothing: the worker boots `process_id` while it is still small
to fork.
"""
