# Demo world only: measured error rates of the bias tests against the truth file (issue 17).
# Rules only; the logic lives in medbias.validation and medbias.replication.


rule validation_error_rates:
    input:
        truth=f"{DEMO}/truth.json",
        weat_seeds=f"{RIOS}/fig1_weat_seeds.csv",
        seat=f"{PLM}/seat_long.csv",
        tasks=f"{MIMIC}/tasks.csv",
        gaps=expand(
            f"{DOWNSTREAM_DIR}/{{model}}/gaps.parquet", model=DOWNSTREAM["models"]
        ),
    output:
        csv=f"{RESULTS}/validation/error_rates.csv",
        md=report(
            f"{RESULTS}/validation/error_rates.md",
            caption="../report/validation_error_rates.rst",
            category="validation",
        ),
        decisions=f"{RESULTS}/validation/decisions.csv",
        png=report(
            f"{RESULTS}/validation/error_rates.png",
            caption="../report/validation_error_rates.rst",
            category="validation",
        ),
        pdf=f"{RESULTS}/validation/error_rates.pdf",
    log:
        f"{LOGS}/validation/error_rates.log",
    benchmark:
        f"{BENCHMARKS}/validation/error_rates.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=library_code("validation_error_rates.py"),
        models=DOWNSTREAM["models"],
        alpha=DOWNSTREAM["alpha"],
        null_worlds=config["demo"]["validation"]["null_worlds"],
        null_draws=config["demo"]["validation"]["null_draws"],
        seed=config["seed"],
    script:
        f"{SCRIPTS}/validation_error_rates.py"


rule validation:
    input:
        f"{RESULTS}/validation/error_rates.md",
