"""Tables and a figure that describe the demo world from its truth file (what was planted)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from medbias.io.tables import PaperPage, Section


def phenotype_table(truth: dict[str, Any]) -> pd.DataFrame:
    """One row per benchmark phenotype: design prevalence and realised prevalence overall and by gender."""
    rows = [
        {
            "phenotype": name,
            "type": v["type"],
            "design_prevalence": v["design_prevalence"],
            "realized_prevalence": v["realized_prevalence"],
            "prevalence_male": v["realized_prevalence_male"],
            "prevalence_female": v["realized_prevalence_female"],
            "admissions_with": v["admissions_with"],
        }
        for name, v in truth["mimic"]["phenotypes"].items()
    ]
    return pd.DataFrame(rows).sort_values("phenotype").reset_index(drop=True)


# long: one row per kind of planted effect and control, written out in the table's order
def planted_table(truth: dict[str, Any]) -> pd.DataFrame:
    """One row per planted effect or control of the demo world, with its expected direction."""
    rows = []
    for c in truth["mimic"]["planted_conditions"]:
        rows.append(
            {
                "study_input": "notes",
                "effect": f"condition '{c['name']}' co-occurs with gender",
                "expected": "control (none)" if c["control"] else f"leans {c['lean']}",
                "strength": c["male_share"],
                "count": c["carriers"],
            }
        )
    for gap in truth["mimic"].get("planted_recall_gaps", []):
        rows.append(
            {
                "study_input": "notes",
                "effect": (
                    f"evidence of '{gap['phenotype']}' mentioned less in {gap['disadvantaged']} notes "
                    f"(other notes: at rate {gap['advantaged_evidence_rate']:g}, in "
                    f"{gap['advantaged_sentences']} sentences)"
                ),
                "expected": f"negative recall gap for {gap['attribute']} {gap['disadvantaged']} (other "
                f"phenotypes: none)"
                + (
                    f", asserted on the {'/'.join(gap['cohorts'])} task (the others lack power at this size)"
                    if "cohorts" in gap
                    else ""
                ),
                "strength": gap["evidence_rate_factor"],
                "count": truth["mimic"]["phenotypes"][gap["phenotype"]]["admissions_with"],
            }
        )
    for gap in truth["mimic"].get("planted_intersectional_gaps", []):
        withheld = gap["withheld_admissions"]
        rows.append(
            {
                "study_input": "notes",
                "effect": (
                    f"evidence of '{gap['phenotype']}' never stated in the notes of cell {gap['cell']} "
                    f"({' x '.join(gap['crossing'])}; {withheld['cell']} admissions) nor in a "
                    f"{gap['other_gender_share']:.2f} share of the other gender's ({withheld['other_gender']}); "
                    "other notes: at the usual rates"
                ),
                "expected": f"worst recall cell {gap['cell']} below 0 after BH on the {'/'.join(gap['cohorts'])} "
                "task; no per-attribute recall gap of it after BH",
                "strength": 0.0,
                "count": truth["mimic"]["phenotypes"][gap["phenotype"]]["admissions_with"],
            }
        )
    counts = truth.get("phenotype_annotations", {}).get("planted_label_bias", {})
    for bias in truth.get("mental", {}).get("planted_label_bias", []):
        rows.append(
            {
                "study_input": "phenotype annotations",
                "effect": f"'{bias['column']}' marked on {bias['favoured']} notes that do not mention it",
                "expected": f"{bias['task']}: original models' mismatch above 0 favouring {bias['favoured']}; "
                f"augmented close to 0",
                "strength": bias["rate"],
                "count": counts.get(bias["column"], {}).get("notes", 0),
            }
        )
    for task in truth.get("mental", {}).get("control_tasks", []):
        rows.append(
            {
                "study_input": "phenotype annotations",
                "effect": f"{task} labelled from note content only",
                "expected": "control (mismatch close to 0)",
                "strength": 0.0,
                "count": 0,
            }
        )
    for corpus, plant in truth.get("mental", {}).get("direct_bias", {}).items():
        rows.append(
            {
                "study_input": f"{corpus} word vectors",
                "effect": "depression synonyms x male words in extra sentences",
                "expected": "synonyms lean male (Direct Bias above the general vectors')"
                if plant["depression_male_share"] > 0.5
                else "control (gender-balanced sentences)",
                "strength": plant["depression_male_share"],
                "count": 0,
            }
        )
    plm = truth.get("plm")
    if plm:
        for test in plm["seat_planted"]:
            rows.append(
                {
                    "study_input": "plm corpus",
                    "effect": f"{test}: minority identities x stereotypical diseases",
                    "expected": "SEAT effect > 0 and significant; StereoSet ss > 50",
                    "strength": plm["planted_share"],
                    "count": plm["mentions_per_group"],
                }
            )
        for test in plm["seat_controls"]:
            rows.append(
                {
                    "study_input": "plm corpus",
                    "effect": f"{test}: birthday ordinals x every disease equally",
                    "expected": "control (SEAT not significant)",
                    "strength": 0.0,
                    "count": plm["mentions_per_group"],
                }
            )
    for pair in truth["pubmed"]["planted_pairs"] + truth["pubmed"]["control_pairs"]:
        strengths = pair.get("strengths", [0.0] * len(truth["pubmed"]["decades"]))
        for decade, s in zip(truth["pubmed"]["decades"], strengths):
            rows.append(
                {
                    "study_input": "pubmed",
                    "effect": f"{pair['name']} x male/female, {decade['decade']}",
                    "expected": "male words closer to A" if s > 0 else "control (none)",
                    "strength": s,
                    "count": decade["articles"],
                }
            )
    return pd.DataFrame(rows)


def planted_page(planted: pd.DataFrame, phenotypes: pd.DataFrame) -> PaperPage:
    """table_planted_effects.md: the planted effects and controls (``planted_table``), then the
    benchmark phenotypes (``phenotype_table``)."""
    return PaperPage(
        "Demo world: planted effects and controls",
        (Section(planted), Section(phenotypes, "Benchmark phenotypes")),
    )


def plot_demo_world(truth: dict[str, Any], png: str, pdf: str) -> None:
    """Two panels: phenotype prevalence by gender; the planted gender lean of note conditions."""
    from medbias.core.figures import FEMALE, MALE, pyplot, save

    plt = pyplot()
    pheno = phenotype_table(truth).sort_values("realized_prevalence")
    conditions = pd.DataFrame(truth["mimic"]["planted_conditions"])
    conditions["observed_male_share"] = conditions["male_carriers"] / conditions["carriers"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 7), gridspec_kw={"width_ratios": [3, 2]})
    y = range(len(pheno))
    axes[0].barh([i - 0.2 for i in y], pheno["prevalence_male"], height=0.4, label="male", color=MALE)
    axes[0].barh([i + 0.2 for i in y], pheno["prevalence_female"], height=0.4, label="female", color=FEMALE)
    axes[0].set_yticks(list(y), [p if len(p) <= 45 else p[:44] + "…" for p in pheno["phenotype"]], fontsize=8)
    axes[0].set_xlabel("admissions with the phenotype (fraction)")
    axes[0].set_title("A. Benchmark phenotypes by gender")
    axes[0].legend(loc="lower right")
    colors = conditions["lean"].map({"male": MALE, "female": FEMALE, "none": "#999999"})
    # bars start at parity (0.5), so a condition carried only by women (share 0) is a full bar, not none
    axes[1].barh(conditions["name"], conditions["observed_male_share"].fillna(0.5) - 0.5, left=0.5, color=colors)
    for k, carriers in enumerate(conditions["carriers"]):
        if carriers == 0:  # a share of nothing: say so rather than draw an empty row
            axes[1].text(0.01, k, "no carriers at this scale", va="center", fontsize=8, color="#555555")
    axes[1].axvline(0.5, color="black", lw=0.8, ls="--")
    axes[1].set_xlim(0, 1)
    axes[1].set_xlabel("share of carriers who are male (bars from parity, 0.5)")
    axes[1].set_title("B. Planted note conditions\n(colour: planted lean; grey: controls)")
    fig.suptitle(f"Demo world: {truth['mimic']['patients']} patients, {truth['mimic']['notes']} notes")
    fig.tight_layout()
    save(fig, png, pdf)
