"""The workflow itself: the configuration loader and checks, what a configuration asks the DAG to build,
report pages and cluster settings."""
