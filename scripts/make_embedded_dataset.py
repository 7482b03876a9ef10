"""Generate the small synthetic biomedical triple dataset shipped as the offline default.

Why synthetic: the pipeline must run end to end with no network access, so its default
dataset has to live inside the repository. Real corpora (GM-CIHT, SemMedDB extracts) come
with licences and download steps, so this script writes a small stand-in in exactly the
GM-CIHT schema instead: one JSON object per line with the keys PREDICATE, SUBJECT_TEXT,
OBJECT_TEXT and SENTENCE, in that order.

How it is built: for every row a relation is drawn from a fixed per-split quota, a
(subject, object) pair is drawn from that relation's entity vocabularies (drugs,
genes/proteins, diseases, adverse effects, diagnostic tests), and one of at least six
relation-specific templates is filled in. The templates vary trigger words, tense, voice
(the SUBJECT is always the agent, also in passive sentences) and hedging; some
INTERACTS_WITH / COEXISTS_WITH templates reuse trigger words of other relations so the
relations are not trivially separable. Optional study-context clauses are added before or
after the core clause. Sentences are 12-40 words long, and no sentence and no
(relation, subject, object) triple occurs twice anywhere in the dataset, so the splits do
not leak into each other. Entity pairings are random: the sentences are not factual claims.

Everything is driven by random.Random(SEED), so the output is byte-for-byte reproducible.

Usage: python scripts/make_embedded_dataset.py --out biochunk/datasets/embedded
"""
import argparse
import json
import random
from pathlib import Path

SEED = 13
MIN_WORDS, MAX_WORDS = 12, 40
MAX_TRIES = 10_000
PREFIX_PROB, SUFFIX_PROB, LEAD_IN_PROB = 0.35, 0.5, 0.2

RELATIONS = ["TREATS", "INHIBITS", "STIMULATES", "CAUSES",
             "PREVENTS", "INTERACTS_WITH", "DIAGNOSES", "COEXISTS_WITH"]
# Rows per relation in each split, in RELATIONS order (roughly, not exactly, balanced).
SPLIT_QUOTAS = {
    "train": [34, 30, 26, 32, 27, 31, 29, 31],  # 240
    "dev":   [9, 7, 6, 8, 7, 8, 7, 8],          # 60
    "test":  [8, 8, 7, 7, 8, 7, 8, 7],          # 60
}

DRUGS = [
    "metformin", "cisplatin", "warfarin", "aspirin", "atorvastatin", "simvastatin", "lisinopril",
    "losartan", "amlodipine", "metoprolol", "beta-blocker", "ibuprofen", "celecoxib",
    "dexamethasone", "prednisone", "methotrexate", "tamoxifen", "letrozole", "trastuzumab",
    "imatinib", "gefitinib", "erlotinib", "rapamycin", "paclitaxel", "doxorubicin",
    "5-fluorouracil", "gemcitabine", "clopidogrel", "low-molecular-weight heparin",
    "insulin glargine", "liraglutide", "sitagliptin", "omeprazole", "ketoconazole", "rifampin",
    "fluoxetine", "lithium carbonate", "valproic acid", "levetiracetam", "donepezil", "levodopa",
    "ciprofloxacin", "vancomycin", "hydroxychloroquine", "tocilizumab", "infliximab",
    "pembrolizumab", "allopurinol", "N-acetylcysteine", "digoxin", "amiodarone", "spironolactone",
]
GENES = [
    "tumor necrosis factor", "COX-2", "EGFR", "interleukin-6", "HER2",
    "alpha-ketoglutarate dehydrogenase", "nuclear factor-kappa B", "p53", "mTOR",
    "vascular endothelial growth factor", "AMP-activated protein kinase",
    "insulin receptor-complex", "T-cell receptor-complex", "cytochrome P450 3A4", "P-glycoprotein",
    "angiotensin-converting enzyme", "HMG-CoA reductase", "interleukin-1 beta", "interferon-gamma",
    "Janus kinase 2", "BRAF", "PD-L1", "B-cell lymphoma 2", "glucagon-like peptide-1 receptor",
    "estrogen receptor alpha", "aromatase", "dihydrofolate reductase", "topoisomerase II",
    "acetylcholinesterase", "monoamine oxidase B", "matrix metalloproteinase-9",
    "insulin-like growth factor 1", "caspase-3", "thromboxane A2 synthase",
]
DISEASES = [
    "type 2 diabetes mellitus", "hypertension", "atrial fibrillation", "myocardial infarction",
    "heart failure", "ischemic stroke", "deep vein thrombosis", "rheumatoid arthritis",
    "systemic lupus erythematosus", "Crohn's disease", "ulcerative colitis", "psoriasis", "asthma",
    "chronic obstructive pulmonary disease", "community-acquired pneumonia", "tuberculosis",
    "sepsis", "non-small cell lung cancer", "breast cancer", "colorectal cancer",
    "prostate cancer", "hepatocellular carcinoma", "chronic myeloid leukemia", "melanoma",
    "Alzheimer's disease", "Parkinson's disease", "major depressive disorder", "epilepsy",
    "migraine", "chronic kidney disease", "gout", "osteoporosis", "obesity",
    "non-alcoholic fatty liver disease", "hypothyroidism", "iron-deficiency anemia",
]
ADVERSE_EFFECTS = [
    "nephrotoxicity", "ototoxicity", "hepatotoxicity", "QT prolongation", "hypoglycemia",
    "lactic acidosis", "gastrointestinal bleeding", "peripheral neuropathy", "cardiotoxicity",
    "Stevens-Johnson syndrome", "serotonin syndrome", "angioedema", "rhabdomyolysis",
    "agranulocytosis", "interstitial lung disease", "hyperkalemia",
]
# Diagnostic tests with the conditions they plausibly diagnose (kept curated, not random).
TESTS = {
    "magnetic resonance imaging":
        ["ischemic stroke", "Alzheimer's disease", "prostate cancer", "hepatocellular carcinoma"],
    "serum troponin assay": ["myocardial infarction", "cardiotoxicity", "heart failure"],
    "electrocardiography": ["atrial fibrillation", "myocardial infarction", "QT prolongation"],
    "echocardiography": ["heart failure", "cardiotoxicity", "atrial fibrillation"],
    "HbA1c measurement": ["type 2 diabetes mellitus", "hypoglycemia"],
    "low-dose computed tomography":
        ["non-small cell lung cancer", "interstitial lung disease", "community-acquired pneumonia"],
    "mammography": ["breast cancer"],
    "colonoscopy": ["colorectal cancer", "Crohn's disease", "ulcerative colitis"],
    "PET-CT scanning":
        ["non-small cell lung cancer", "melanoma", "colorectal cancer", "Parkinson's disease"],
    "polymerase chain reaction testing": ["tuberculosis", "sepsis", "chronic myeloid leukemia"],
    "bone marrow biopsy": ["chronic myeloid leukemia", "agranulocytosis", "iron-deficiency anemia"],
    "spirometry": ["asthma", "chronic obstructive pulmonary disease"],
    "dual-energy X-ray absorptiometry": ["osteoporosis", "obesity"],
    "brain natriuretic peptide assay": ["heart failure"],
    "compression ultrasonography": ["deep vein thrombosis", "non-alcoholic fatty liver disease"],
    "electroencephalography": ["epilepsy", "migraine"],
    "liver biopsy":
        ["non-alcoholic fatty liver disease", "hepatotoxicity", "hepatocellular carcinoma"],
    "interferon-gamma release assay": ["tuberculosis"],
    "serum creatinine monitoring": ["chronic kidney disease", "nephrotoxicity", "rhabdomyolysis"],
    "thyroid-stimulating hormone testing": ["hypothyroidism"],
    "anti-nuclear antibody testing": ["systemic lupus erythematosus", "rheumatoid arthritis"],
    "audiometry": ["ototoxicity"],
    "synovial fluid analysis": ["gout", "rheumatoid arthritis"],
    "prostate-specific antigen screening": ["prostate cancer"],
}
TEST_PAIRS = [(test, cond) for test, conds in TESTS.items() for cond in conds]

# {h} = SUBJECT (agent), {t} = OBJECT, {x} = distractor drug, {g} = distractor gene.
TEMPLATES = {
    "TREATS": [
        "{h} is an effective treatment for {t}", "{h} was used to treat {t}",
        "patients with {t} were successfully treated with {h}",
        "{t} was managed with {h} as first-line therapy",
        "{h} therapy improved clinical outcomes in {t}",
        "treatment of {t} with {h} led to remission in most patients",
        "{h} may be considered for the management of refractory {t}",
        "{h} significantly reduced symptom severity in patients with {t}",
    ],
    "INHIBITS": [
        "{h} inhibits {t}", "{h} inhibited {t} activity in a dose-dependent manner",
        "{h} was identified as a potent inhibitor of {t}", "{t} was inhibited by {h}",
        "the inhibition of {t} by {h} reduced downstream signaling",
        "{h} suppressed the expression of {t}", "{h} blocked {t} signaling",
        "{t} activity was markedly attenuated by {h}", "{h} possibly acts by downregulating {t}",
    ],
    "STIMULATES": [
        "{h} stimulates {t}", "{h} rapidly activated {t}", "{t} was strongly induced by {h}",
        "{h} increased the expression of {t}", "{h} acts as an agonist of {t}",
        "the activation of {t} by {h} enhanced downstream signaling", "{h} upregulated {t}",
        "{h} may enhance {t} activity",
    ],
    "CAUSES": [
        "{h} causes {t}", "{h} induced {t}", "{t} was attributed to {h}",
        "{h} led to {t} in several patients", "{t} developed as a result of {h} exposure",
        "{h} is a known cause of {t}", "{t} was caused by {h}", "{h} may trigger {t}",
        "{t} emerged during {h} treatment and resolved after withdrawal",
    ],
    "PREVENTS": [
        "{h} prevents {t}", "{h} reduced the incidence of {t}",
        "prophylactic {h} protected against {t}", "{t} was prevented by {h}",
        "{h} lowered the risk of developing {t}", "prophylaxis with {h} averted {t}",
        "{h} may help to prevent recurrent {t}",
        "the occurrence of {t} was reduced by prophylactic {h}",
    ],
    "INTERACTS_WITH": [
        "{h} interacts with {t}", "{h} interacted with {t}, increasing its plasma concentration",
        "co-administration of {h} with {t} produced a clinically relevant drug interaction",
        "{h} displaced {t} from plasma protein binding sites",
        "a pharmacokinetic interaction between {h} and {t} was observed",
        "{h} altered the metabolism of {t} by competing for {g}",
        "{h} may inhibit the clearance of {t} through a drug-drug interaction",
        "{h} and {t} showed a synergistic interaction that was independent of {g}",
    ],
    "DIAGNOSES": [
        "{h} was used to diagnose {t}", "{t} was diagnosed by {h}",
        "{h} confirmed the diagnosis of {t}", "{h} detected {t} with high sensitivity",
        "{h} is the diagnostic method of choice for {t}",
        "{h} identified early {t} in asymptomatic patients",
        "the diagnosis of {t} was established using {h}",
        "{h} may reliably distinguish {t} from other conditions",
    ],
    "COEXISTS_WITH": [
        "{h} frequently coexists with {t}", "{h} was often accompanied by {t}",
        "patients with {h} commonly also presented with {t}",
        "{h} and {t} co-occurred in a substantial proportion of patients treated with {x}",
        "{t} was observed concurrently with {h}",
        "a high prevalence of {t} was found among patients with {h}",
        "{h} is a frequent comorbidity of {t}",
        "{h} and comorbid {t} were both associated with elevated {g} levels",
    ],
}
# Entity pools per relation: list of (subject pool, object pool) options.
POOLS = {
    "TREATS": [(DRUGS, DISEASES)],
    "INHIBITS": [(DRUGS, GENES), (GENES, GENES)],
    "STIMULATES": [(DRUGS, GENES), (GENES, GENES)],
    "CAUSES": [(DRUGS, ADVERSE_EFFECTS)],
    "PREVENTS": [(DRUGS, DISEASES), (DRUGS, ADVERSE_EFFECTS)],
    "INTERACTS_WITH": [(DRUGS, DRUGS)],
    "COEXISTS_WITH": [(DISEASES, DISEASES)],
}
# Study-context distractors by setting; suffixes carry their own leading separator.
CONTEXTS = {
    "clinical": (
        ["In a randomized cohort of {n} patients", "In a retrospective analysis of {n} cases",
         "After {w} weeks of follow-up", "In a multicenter study", "In elderly patients",
         "Among {n} consecutive outpatients"],
        [" in a randomized cohort of {n} patients", " after {w} weeks",
         " during the {w}-week follow-up period", " during concomitant {x} therapy",
         ", as reported in a prospective cohort study", " in a real-world registry"]),
    "dosing": (
        ["Compared with placebo", "In a double-blind trial"],
        [" compared with placebo", " at a daily dose of {d} mg",
         ", although the effect size was modest"]),
    "lab": (
        ["In murine models", "In cultured human hepatocytes", "In xenograft models",
         "Under hypoxic conditions", "In primary T cells"],
        [" according to in vitro data", ", as shown by western blot analysis",
         " within {hr} hours of exposure", " in {cell} cells"]),
    "any": ([], [", which was consistent with previous reports",
                 ", a finding that warrants further investigation"]),
}
RELATION_CONTEXTS = {
    "TREATS": ["clinical", "dosing", "any"], "CAUSES": ["clinical", "dosing", "any"],
    "PREVENTS": ["clinical", "dosing", "any"], "DIAGNOSES": ["clinical", "any"],
    "COEXISTS_WITH": ["clinical", "any"], "INHIBITS": ["lab", "any"],
    "STIMULATES": ["lab", "any"], "INTERACTS_WITH": ["clinical", "dosing", "any"],
}
LEAD_INS = ["We found that", "These data suggest that", "Our results indicate that",
            "Notably,", "It was observed that", "The results showed that",
            "Interestingly,", "Taken together, the findings show that"]
CELL_LINES = ["HeLa", "HepG2", "MCF-7", "A549", "HEK293"]
HOURS = [2, 6, 12, 24, 48]
COHORT_SIZES = [24, 36, 48, 60, 85, 120, 150, 212, 340, 512]
WEEKS = [4, 6, 8, 12, 24, 48, 52]
DOSES_MG = [5, 10, 20, 40, 50, 100, 250, 500, 850, 1000]


def fill(rng, text, head, tail):
    """Fill numeric and distractor slots, keeping distractors distinct from the pair."""
    x = rng.choice([d for d in DRUGS if d not in (head, tail)])
    g = rng.choice([e for e in GENES if e not in (head, tail)])
    return text.format(h=head, t=tail, x=x, g=g, n=rng.choice(COHORT_SIZES),
                       w=rng.choice(WEEKS), d=rng.choice(DOSES_MG),
                       hr=rng.choice(HOURS), cell=rng.choice(CELL_LINES))


def make_sentence(rng, relation, head, tail):
    """Template core plus at most one context clause of each setting (no contradictions)."""
    kinds = list(RELATION_CONTEXTS[relation])
    core = fill(rng, rng.choice(TEMPLATES[relation]), head, tail)
    prefix = None
    if rng.random() < PREFIX_PROB:
        kind = rng.choice([k for k in kinds if CONTEXTS[k][0]])
        kinds.remove(kind)
        prefix = fill(rng, rng.choice(CONTEXTS[kind][0]), head, tail)
    n_suffixes = int(rng.random() < SUFFIX_PROB)
    if len(core.split()) + (len(prefix.split()) if prefix else 0) < MIN_WORDS:
        n_suffixes += 1  # pad short sentences with study context
    suffixes = [(k == "any", fill(rng, rng.choice(CONTEXTS[k][1]), head, tail))
                for k in rng.sample(kinds, min(n_suffixes, len(kinds)))]
    for _, text in sorted(suffixes, key=lambda x: (x[0], x[1].startswith(","))):
        core += text  # phrases first, then comma clauses, the generic remark last
    if prefix:
        core = f"{prefix}, {core}"
    elif rng.random() < LEAD_IN_PROB or (core.startswith((head, tail)) and core[0].islower()):
        core = f"{rng.choice(LEAD_INS)} {core}"  # never re-case an entity
    return core[0].upper() + core[1:] + "."


def sample_pair(rng, relation):
    if relation == "DIAGNOSES":
        return rng.choice(TEST_PAIRS)
    subjects, objects = rng.choice(POOLS[relation])
    head = rng.choice(subjects)
    return head, rng.choice([o for o in objects if o != head])


def make_row(rng, relation, seen_sentences, seen_triples):
    for _ in range(MAX_TRIES):
        head, tail = sample_pair(rng, relation)
        if (relation, head, tail) in seen_triples:
            continue
        sentence = make_sentence(rng, relation, head, tail)
        if sentence in seen_sentences or not MIN_WORDS <= len(sentence.split()) <= MAX_WORDS:
            continue
        seen_sentences.add(sentence)
        seen_triples.add((relation, head, tail))
        return {"PREDICATE": relation, "SUBJECT_TEXT": head,
                "OBJECT_TEXT": tail, "SENTENCE": sentence}
    raise RuntimeError(f"could not draw a fresh {relation} row")


def build(seed=SEED):
    rng = random.Random(seed)
    seen_sentences, seen_triples, splits = set(), set(), {}
    for split, quota in SPLIT_QUOTAS.items():
        relations = [r for r, k in zip(RELATIONS, quota) for _ in range(k)]
        rng.shuffle(relations)
        splits[split] = [make_row(rng, r, seen_sentences, seen_triples) for r in relations]
    return splits


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("biochunk/datasets/embedded"))
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in build(args.seed).items():
        path = args.out / f"{split}.jsonl"
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        counts = {r: sum(row["PREDICATE"] == r for row in rows) for r in RELATIONS}
        print(f"{split}: {len(rows)} rows  " + " ".join(f"{r}={c}" for r, c in counts.items()))


if __name__ == "__main__":
    main()
