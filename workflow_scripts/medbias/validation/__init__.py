"""The demo world's checks on the tests themselves: measured error rates, planted-effect recovery and replication over training seeds."""
