from witness_gate.cli import main

main()
