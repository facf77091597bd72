"""Study plm (Xie et al. 2024): race and LGBTQ+ bias in pretrained models, debiasing, fine-tuning."""
