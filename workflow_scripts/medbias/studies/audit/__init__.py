"""Study audit: every intrinsic bias test that applies to one registry entry, on one card."""
