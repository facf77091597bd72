"""Phrase banks for synthetic clinical notes.

Short, invented sentences in the register of ICU notes. Nothing here is taken from MIMIC-III.
"""

from __future__ import annotations

# HCUP CCS benchmark phenotype -> evidence phrases a note uses when the patient has it
PHENOTYPE_EVIDENCE: dict[str, tuple[str, ...]] = {
    "Septicemia (except in labor)": (
        "blood cultures positive, treated for sepsis",
        "septic picture with lactate elevated",
    ),
    "Diabetes mellitus without complication": (
        "diabetes on metformin, sugars stable",
        "fingersticks covered with sliding scale insulin",
    ),
    "Diabetes mellitus with complications": ("diabetic nephropathy noted", "diabetic foot ulcer dressed"),
    "Disorders of lipid metabolism": ("hyperlipidemia on atorvastatin", "high cholesterol, statin continued"),
    "Fluid and electrolyte disorders": ("potassium repleted for hypokalemia", "hyponatremia, free water restricted"),
    "Essential hypertension": ("hypertension controlled on lisinopril", "blood pressure elevated, amlodipine given"),
    "Hypertension with complications and secondary hypertension": (
        "hypertensive kidney disease followed",
        "hypertensive heart disease on review",
    ),
    "Acute myocardial infarction": ("troponin rising, stemi on ecg", "cath lab for acute mi"),
    "Coronary atherosclerosis and other heart disease": (
        "coronary artery disease, on aspirin",
        "cad status post stent",
    ),
    "Conduction disorders": ("left bundle branch block on telemetry", "heart block, pacer placed"),
    "Cardiac dysrhythmias": ("atrial fibrillation with rapid rate", "afib on diltiazem drip"),
    "Congestive heart failure; nonhypertensive": (
        "chf exacerbation, diuresed with lasix",
        "reduced ejection fraction, heart failure",
    ),
    "Acute cerebrovascular disease": ("left sided weakness, stroke on head ct", "acute cva, neuro checks hourly"),
    "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)": (
        "right lower lobe infiltrate, pneumonia",
        "treated for pneumonia with ceftriaxone",
    ),
    "Chronic obstructive pulmonary disease and bronchiectasis": (
        "copd on home oxygen",
        "wheezes, copd flare, nebs given",
    ),
    "Pleurisy; pneumothorax; pulmonary collapse": (
        "small pneumothorax, chest tube placed",
        "pleural effusion with collapse",
    ),
    "Respiratory failure; insufficiency; arrest (adult)": (
        "intubated for respiratory failure",
        "hypoxic respiratory failure on vent",
    ),
    "Other lower respiratory disease": ("lung nodule for follow up", "chronic cough, pulmonary fibrosis"),
    "Other upper respiratory disease": ("sinusitis, nasal spray started", "laryngeal edema, throat swelling"),
    "Other liver diseases": ("ascites, liver cirrhosis", "elevated lfts, fatty liver"),
    "Gastrointestinal hemorrhage": ("melena, gi bleed, egd planned", "hematemesis, transfused two units"),
    "Acute and unspecified renal failure": (
        "creatinine up, acute kidney injury",
        "oliguric renal failure, renal consulted",
    ),
    "Chronic kidney disease": ("chronic kidney disease stage four", "ckd, on dialysis tuesday thursday"),
    "Complications of surgical procedures or medical care": (
        "wound dehiscence post op",
        "line infection, catheter removed",
    ),
    "Shock": ("hypotensive on levophed, shock", "pressors for shock, map below sixty"),
}

# sentences that make in-hospital mortality learnable from the first 48 hours
GRAVE_PHRASES: tuple[str, ...] = (
    "family meeting held regarding goals of care",
    "prognosis poor, comfort measures discussed",
    "pressors maximized, mental status declining",
    "code status changed to dnr dni",
)
STABLE_PHRASES: tuple[str, ...] = (
    "ambulating in hall, tolerating diet",
    "plan to transfer to floor tomorrow",
    "pain controlled, sleeping well",
)

FILLER_PHRASES: tuple[str, ...] = (
    "will continue to monitor",
    "lungs clear bilaterally",
    "skin intact, turned every two hours",
    "iv access patent",
    "labs drawn and sent",
    "medications given as ordered",
    "call bell within reach",
    "no acute events overnight",
)

# (subject, possessive, object, noun, adjective) per gender
GENDER_WORDS: dict[str, dict[str, str]] = {
    "M": {"subj": "he", "poss": "his", "obj": "him", "noun": "man", "adj": "male", "letter": "M"},
    "F": {"subj": "she", "poss": "her", "obj": "her", "noun": "woman", "adj": "female", "letter": "F"},
}

NOTE_DESCRIPTIONS: dict[str, str] = {
    "Nursing/other": "Report",
    "Nursing": "Nursing Progress Note",
    "Physician ": "Physician Resident Progress Note",
    "Radiology": "CHEST (PORTABLE AP)",
    "ECG": "Report",
    "Discharge summary": "Report",
    "Echo": "Report",
    "Respiratory ": "Respiratory Care Shift Note",
    "Nutrition": "Nutrition Assessment",
    "Social Work": "Social Work Note",
    "Case Management ": "Case Management Note",
}

# one representative placeholder per family of config/resources/mimic-facts/deid_placeholders.txt
PLACEHOLDER_FAMILIES: dict[str, tuple[str, ...]] = {
    "date": ("[**2151-7-16**]", "[**7-16**]", "[**2151**]", "[**Month (only) 123**]", "[**Month Day Year (2) **]"),
    "name": (
        "[**Known lastname **]",
        "[**First Name8 (NamePattern2) **]",
        "[**Doctor Last Name **]",
        "[**Name (NI) **]",
    ),
    "location": ("[**Location (un) 4265**]", "[**Street Address(1) **]", "[**State **]"),
    "hospital": ("[**Hospital1 18**]", "[**Hospital Unit Name 153**]", "[**Hospital **]"),
    "contact": ("[**Telephone/Fax (1) **]", "[**E-mail address **]", "[**Pager number **]"),
    "number": ("[**Medical Record Number **]", "[**Numeric Identifier **]", "[**Job Number **]"),
    "age_over_90": ("[**Age over 90 **]",),
    "other": ("[** **]", "[**Company **]", "[**University/College **]"),
}
