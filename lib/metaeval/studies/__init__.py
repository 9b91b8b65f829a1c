"""Studies: one module per reproduced paper (the analyses as library calls) and plotting."""
