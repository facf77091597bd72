"""The demo world: synthetic data in the exact formats of the real inputs, with planted effects.

Everything here is seeded and deterministic; every planted effect and every control is written to
the truth file, which the tests compare against what the pipeline finds.
"""
