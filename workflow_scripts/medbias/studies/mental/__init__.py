"""Study mental (Sogancioglu et al. 2023): gender bias in embeddings and mental-health phenotyping."""
