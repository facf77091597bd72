# The report's pages (report/items.yaml): every paper table and figure as a readable HTML page with
# its caption (what it shows, what the paper reported, where it comes from). `snakemake --report
# report.zip` collects them, grouped by study (category) and part (subcategory).


localrules:
    report_page,
    report_front_door,


rule report_page:
    input:
        lambda w: f"{RESULTS}/{REPORT_ITEMS[w.page]['file']}",
    output:
        report(
            f"{RESULTS}/report/{{page}}.html",
            caption="../report/item.rst",
            category=lambda w: REPORT_ITEMS[w.page]["study"],
            subcategory=lambda w: REPORT_ITEMS[w.page]["part"],
        ),
    log:
        f"{LOGS}/report/{{page}}.log",
    benchmark:
        f"{TIMINGS}/report/{{page}}.tsv"
    wildcard_constraints:
        page="|".join(re.escape(page) for page in REPORT_ITEMS),
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        item=lambda w: REPORT_ITEMS[w.page],
        caption=lambda w: caption_rst(REPORT_ITEMS[w.page]),
        code=library_code("report_page.py"),
    script:
        f"{SCRIPTS}/report_page.py"


# at the end of each study: the list of its tables and figures, and a line in the log saying where they are
localrules:
    study_index,


rule study_index:
    input:
        lambda w: [f"{RESULTS}/report/{page}.html" for page in REPORT_FOLDERS[w.folder]],
    output:
        f"{RESULTS}/{{folder}}/index.md",
    log:
        f"{LOGS}/report/{{folder}}_index.log",
    benchmark:
        f"{TIMINGS}/report/{{folder}}_index.tsv"
    wildcard_constraints:
        folder="|".join(re.escape(folder) for folder in REPORT_FOLDERS),
    priority: EARLY_PRIORITY
    conda:
        "../envs/cpu.yaml"
    params:
        folder=lambda w: w.folder,
        report_items=REPORT_ITEMS,
        code=library_code("report_index.py"),
    message:
        f"{{wildcards.folder}}: done; its tables and figures are in {RESULTS}/{{wildcards.folder}}/, listed in {{output}} with their report pages"
    script:
        f"{SCRIPTS}/report_index.py"


# the report's front door: every page under its study, and each results folder's list of its files
rule report_front_door:
    input:
        report_pages(),
    output:
        f"{RESULTS}/report/index.html",
    log:
        f"{LOGS}/report/index.log",
    benchmark:
        f"{TIMINGS}/report/index.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        report_items=REPORT_ITEMS,
        folders=list(REPORT_FOLDERS),
        code=library_code("report_front_door.py"),
    script:
        f"{SCRIPTS}/report_front_door.py"
