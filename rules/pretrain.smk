# Continued pretraining of the clinical BERT (Zhang et al. 2020, sections 3.3 and 4.4, appendix D):
# the baseline and one adversarially debiased variant per protected attribute.


rule hurtful_pretrain:
    input:
        sequences=f"{TEXT_DIR}/mimic/sequences.parquet",
        demographics=f"{MIMIC}/demographics.parquet",
        samples=f"{MIMIC}/task_samples.parquet",
        tokenizer=f"{MIMIC}/tokenizer",
        base=model_inputs(config["hurtful"]["base_model"]),
    output:
        model=directory(f"{HURTFUL}/models/{{variant}}"),
        curve=f"{HURTFUL}/pretrain/{{variant}}_curve.csv",
        summary=f"{HURTFUL}/pretrain/{{variant}}.json",
    log:
        f"{LOGS}/hurtful/pretrain_{{variant}}.log",
    cache: CACHE
    priority: CRITICAL_PATH_PRIORITY
    conda:
        "../envs/gpu.yaml"
    threads: config["hurtful"]["pretrain"]["threads"]
    resources:
        mem_mb=16000,
        gpu=config["hurtful"]["pretrain"]["gpus"],
    params:
        code=library_code("hurtful_pretrain.py"),
        variant=lambda wc: wc.variant,
        attribute=lambda wc: plan.variant_attribute(wc.variant),
        pretrain=config["hurtful"]["pretrain"],
        base_name=config["hurtful"]["base_model"],
        base_entry=config["models"][config["hurtful"]["base_model"]],
        checkpoints=lambda wc: f"{HURTFUL}/checkpoints/{wc.variant}",
        seed=seed_for("hurtful_pretrain"),
    script:
        f"{SCRIPTS}/hurtful_pretrain.py"
