"""Rule script (mental): for one embedding, every (task, treatment, learner) classifier trained on
the treated training notes and tested on the counterfactual pairs of the test notes; and Table IV's
gender classifiers (original vs neutralized training notes, tested on the original test notes)."""

import joblib
import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score

from medbias.core.logs import setup_rule_logging
from medbias.studies.mental.phenotyping import build_learner, feature_rows, fit_learner, counterfactual_pairs, training_design

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
features = np.load(snakemake.input.features)
rows = feature_rows(pd.read_parquet(snakemake.input.index))
labels = pd.read_parquet(snakemake.input.labels)
settings = {"svm": p.svm, "rf": p.rf, "mlp": p.mlp}

predictions, selection, fitted = [], [], {}
for task in p.tasks:
    frame = labels[labels["task"] == task]
    pairs = counterfactual_pairs(frame, rows)
    for treatment in p.treatments:
        train_rows, train_y, groups = training_design(frame, treatment, rows)
        if len(np.unique(train_y)) < 2:
            raise RuntimeError(f"task {task}: the training notes hold one class only; Table II shows the split")
        for learner_name in p.learners:
            learner = build_learner(learner_name, settings[learner_name], p.seed)
            model, chosen = fit_learner(learner, features[train_rows], train_y, groups)
            fitted[(task, treatment, learner_name)] = model
            result = pairs[["ROW_ID", "label", "gender"]].copy()
            for side, column in (("female", "row_female"), ("male", "row_male")):
                x = features[pairs[column].to_numpy()]
                result[f"pred_{side}"] = model.predict(x).astype(int)
                result[f"prob_{side}"] = model.predict_proba(x)[:, 1]
            result.insert(0, "learner", learner_name)
            result.insert(0, "treatment", treatment)
            result.insert(0, "task", task)
            predictions.append(result)
            mismatch = float((result["pred_female"] != result["pred_male"]).mean())
            selection.append({"task": task, "treatment": treatment, "learner": learner_name,
                              "train_notes": len(train_y), "train_positive": int(train_y.sum()), **chosen})
            log.info("%s %s %s: %d training rows, mismatch %.3f over %d pairs %s", task, treatment, learner_name,
                     len(train_y), mismatch, len(result), chosen)
predictions = pd.concat(predictions, ignore_index=True)
predictions.insert(0, "embedding", p.name)
predictions.to_parquet(snakemake.output.predictions, index=False)
pd.DataFrame(selection).assign(embedding=p.name).to_csv(snakemake.output.selection, index=False)
joblib.dump(fitted, snakemake.output.models, compress=3)

# Table IV: can gender be read from the training notes' features?
frame = labels[labels["task"] == p.gender_task]
train, test = frame[frame["split"] == "train"], frame[frame["split"] == "test"]
test_x = features[[rows[(int(r), "original")] for r in test["ROW_ID"]]]
test_gender = test["gender"].to_numpy()
majority = train["gender"].value_counts().sort_index().idxmax()
table4 = [{"embedding": p.name, "trained_on": "constant (majority gender of training)",
           "uar": balanced_accuracy_score(test_gender, np.full(len(test_gender), majority))}]
for version in ("original", "neutralized"):
    train_x = features[[rows[(int(r), version)] for r in train["ROW_ID"]]]
    model, chosen = fit_learner(build_learner("svm", p.svm, p.seed), train_x, train["gender"].to_numpy(),
                                train["ROW_ID"].to_numpy())
    uar = balanced_accuracy_score(test_gender, model.predict(test_x))
    table4.append({"embedding": p.name, "trained_on": version, "uar": uar})
    log.info("gender classifier trained on %s notes of %s: UAR %.3f on %d original test notes", version, p.gender_task,
             uar, len(test_gender))
pd.DataFrame(table4).assign(task=p.gender_task, train_notes=len(train), test_notes=len(test)).to_csv(
    snakemake.output.gender, index=False)
