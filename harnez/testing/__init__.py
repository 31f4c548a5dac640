"""Testing aids shipped with Harnez: `scripted_model` (a loopback server speaking the three wires),
`script` (its script format), `formats` (provider framing) and `fixtures` (the pytest fixture)."""
