"""Study vignettes: clinical decisions of causal and chat models on counterfactual vignettes, scored by the
model's own option probabilities (Logé et al. 2021's Q-Pain design; Zack et al. 2024)."""
