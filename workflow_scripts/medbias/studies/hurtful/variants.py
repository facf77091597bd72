"""The names of the hurtful study's pretrained encoders: the baseline and the variants pretrained
with an adversary for one protected attribute (Zhang et al. 2020 section 3.2; ``hurtful.variants``:
``adv_gender``, ...). The one place that knows how a variant's name carries its attribute."""

from __future__ import annotations

from collections.abc import Sequence

# the name of the encoder pretrained with an adversary for an attribute is this prefix and the attribute
# (hurtful.variants: adv_gender, ...)
ADVERSARIAL_PREFIX = "adv_"


def adversarial_variant(attribute: str) -> str:
    """The name of the encoder pretrained against ``attribute`` (gender -> adv_gender)."""
    return f"{ADVERSARIAL_PREFIX}{attribute}"


def variant_attribute(variant: str) -> str | None:
    """The protected attribute of an adversarial variant (adv_gender -> gender); None for the baseline."""
    return variant[len(ADVERSARIAL_PREFIX) :] if variant.startswith(ADVERSARIAL_PREFIX) else None


def debiased_attributes(variants: Sequence[str]) -> list[str]:
    """The attributes of the pretrained adversarial variants, in the config's order (Table D4's rows)."""
    return [a for a in map(variant_attribute, variants) if a]
