"""Study rios (Rios et al. 2020): 60 years of gender bias in PubMed word2vec."""
