"""Each study's analyses and paper tables, one package per study (``studies/<study>/``), on top of the
shared engines (models, metrics, debiasing) of the rest of the library."""
