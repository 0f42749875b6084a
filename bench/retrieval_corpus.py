"""The platform-scale corpus of bench/retrieval.py: built once, cached under var/bench/, reused.

What is real and what is derived (embedding a million texts on two shared cores would take hours):

1. Real text, real vectors. 60 course subjects, each with 24 subject terms; 10 passage templates
   written like lecture notes fill in 3–4 terms of one subject plus generic course words
   ("week", "assignment", "students"). `BASE_PASSAGES` such passages (and, for each of
   `PAIRS` of them, an edited copy with two terms swapped for other terms of the same subject
   and one sentence reworded) are embedded with the product's own local model
   (all-MiniLM-L6-v2 through materials.embeddings, normalised, 384 dimensions).
2. A fitted perturbation. The differences `e(edited) − e(original)` of the real pairs give the
   distribution of a near-duplicate's displacement: their mean and their covariance, kept as
   the top 96 principal components plus an isotropic remainder of the same total variance.
3. Derived chunks. Each of the 1,000,000 chunks belongs to one channel; a channel teaches one
   subject (500 channels over 60 subjects, so about eight channels share a subject: crowded
   neighbourhoods, as on a real platform where many sections teach the same course). A chunk
   is a window straddling two real passages a and b of its subject (chunkers cut across
   paragraphs): its text is the end of a's text followed by the start of b's, and its vector
   is normalise(α·e(a) + (1−α)·e(b) + d), α ~ U(0.55, 1), d drawn from the fitted
   displacement distribution. 3 % of chunks are exact re-uploads (α = 1, d = 0, same text)
   of a passage already used in another channel: the near-duplicates of a real platform.
4. Queries: questions written from the searched channel's subject terms, embedded with the
   real model (no query vector is derived).
5. One channel made of distinct passages: the 10 % channel of the 1M platform (100,000 chunks)
   is not built from mixes of its subject's few real passages, whose near-copies made its recall
   a figure of the data set, but from as many distinct passages as chunks (`distinct_passages`),
   each written for it and embedded with the real model, with no exact or near copy among them
   (`distinct_report` measures the nearest neighbours of a sample). A course that big has a
   vocabulary to match: a passage names one or two of the subject's core terms among words of
   a wider course vocabulary, as a chapter names its subject's key terms among many others.

`describe()` returns the measured fit (cosine of real near-duplicate pairs against derived
ones) for the benchmark's output.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

VERSION = 1
DIM = 384
SUBJECTS = 60
TERMS_PER_SUBJECT = 24
BASE_PASSAGES = 3000
PAIRS = 400
PCA_COMPONENTS = 96
DUPLICATE_SHARE = 0.03

_SUBJECT_ROOTS = [
    (
        "linear algebra",
        "matrix eigenvalue eigenvector determinant basis span rank kernel projection orthogonal subspace transpose inverse diagonalization trace singular decomposition vector scalar column pivot echelon elimination norm",
    ),
    (
        "calculus",
        "derivative integral limit continuity series convergence gradient chain rule antiderivative tangent slope area volume substitution partial differential taylor polynomial sequence extremum curvature optimization riemann",
    ),
    (
        "statistics",
        "variance regression hypothesis sample population confidence interval p-value distribution median estimator bias likelihood correlation bootstrap anova chi-square t-test histogram quartile outlier residual bayesian",
    ),
    (
        "organic chemistry",
        "alkane alkene benzene aromatic nucleophile electrophile carbonyl ester amine isomer chirality reaction mechanism substitution elimination oxidation reduction functional group spectroscopy resonance aldehyde ketone polymer",
    ),
    (
        "cell biology",
        "mitochondria membrane nucleus ribosome protein enzyme cytoplasm organelle mitosis meiosis chromosome transcription translation receptor signaling apoptosis vesicle cytoskeleton metabolism atp lysosome golgi",
    ),
    (
        "microeconomics",
        "demand supply elasticity equilibrium marginal utility consumer producer surplus monopoly oligopoly competition price ceiling externality tax subsidy cost revenue profit game theory incentive market welfare",
    ),
    (
        "macroeconomics",
        "inflation unemployment gdp monetary fiscal policy interest rate central bank recession growth aggregate demand exchange rate deficit debt money supply productivity business cycle stimulus trade balance",
    ),
    (
        "data structures",
        "array linked list stack queue heap hash table tree graph binary search traversal recursion pointer node insertion deletion balanced complexity sorting priority trie adjacency iterator",
    ),
    (
        "algorithms",
        "dynamic programming greedy divide conquer shortest path spanning tree complexity big-o recurrence memoization backtracking np-complete reduction approximation randomized sorting merge quicksort heuristic invariant proof",
    ),
    (
        "operating systems",
        "process thread scheduler kernel memory paging virtual address deadlock semaphore mutex interrupt file system context switch cache swap synchronization system call fork pipe buffer latency",
    ),
    (
        "computer networks",
        "packet router protocol tcp udp ip address routing latency bandwidth congestion handshake socket dns http ethernet switch subnet firewall encryption throughput layer",
    ),
    (
        "machine learning",
        "classifier training overfitting regularization gradient descent neural network loss function feature label validation cross-entropy decision tree clustering embedding hyperparameter precision recall dropout transformer dataset",
    ),
    (
        "educational psychology",
        "motivation cognition memory learning theory constructivism scaffolding feedback metacognition self-efficacy attention assessment zone development behaviourism reinforcement schema transfer mindset engagement anxiety",
    ),
    (
        "curriculum design",
        "learning outcome bloom taxonomy alignment assessment rubric syllabus module objective formative summative competency backward design activity evaluation sequence prerequisite credit mapping standard reflection",
    ),
    (
        "learning analytics",
        "dashboard log data engagement prediction dropout clickstream intervention visualization model privacy indicator cohort retention early warning learner profile sequence mining feedback loop course",
    ),
    (
        "research ethics",
        "informed consent irb privacy confidentiality risk benefit participant vulnerable anonymity data protection approval protocol deception debriefing withdrawal beneficence justice autonomy review board",
    ),
    (
        "world history",
        "empire revolution treaty dynasty colonial trade war migration industrialization nationalism independence reform monarchy republic ancient medieval renaissance enlightenment civilization conquest diplomacy",
    ),
    (
        "taiwan history",
        "qing dynasty japanese rule martial law democratization kuomintang aboriginal migration land reform export economy constitution election identity strait dutch spanish colonial trade formosa chiang",
    ),
    (
        "english literature",
        "novel poetry sonnet metaphor narrator character plot theme romanticism modernism tragedy comedy irony symbolism drama verse prose shakespeare victorian criticism allegory",
    ),
    (
        "physics mechanics",
        "force mass acceleration velocity momentum energy work power friction gravity newton law torque rotation oscillation wave spring collision projectile equilibrium inertia",
    ),
    (
        "electromagnetism",
        "electric field charge potential current resistance capacitor magnetic flux induction circuit voltage ohm coulomb faraday maxwell inductor dielectric conductor wave polarization",
    ),
    (
        "thermodynamics",
        "heat temperature entropy enthalpy pressure volume ideal gas cycle engine efficiency adiabatic isothermal work internal energy equilibrium carnot phase transition calorimetry conduction",
    ),
    (
        "genetics",
        "gene allele dominant recessive mutation dna rna inheritance genotype phenotype chromosome crossing linkage pedigree mendel expression sequencing crispr heredity population variation",
    ),
    (
        "ecology",
        "ecosystem population community niche biodiversity food web predator prey succession habitat carrying capacity biome energy flow nutrient cycle invasive species conservation climate symbiosis",
    ),
    (
        "accounting",
        "balance sheet income statement cash flow asset liability equity depreciation revenue expense ledger journal accrual audit inventory receivable payable ratio tax budget cost",
    ),
    (
        "corporate finance",
        "valuation discount rate net present value capital budgeting cost capital dividend leverage risk return portfolio bond stock option merger acquisition beta wacc liquidity",
    ),
    (
        "marketing",
        "segmentation targeting positioning brand consumer behaviour advertising pricing channel promotion survey market research campaign social media loyalty product lifecycle customer value",
    ),
    (
        "sociology",
        "social class inequality institution culture norm socialization deviance stratification gender race family religion education urbanization globalization identity structure agency conflict",
    ),
    (
        "philosophy",
        "ethics metaphysics epistemology logic argument premise conclusion virtue utilitarianism deontology knowledge belief justification free will mind consciousness kant aristotle plato existentialism",
    ),
    (
        "political science",
        "democracy constitution election party legislature executive judiciary federalism sovereignty rights voting policy ideology regime authoritarian representation public opinion coalition governance",
    ),
    (
        "software engineering",
        "requirement design pattern testing unit test integration refactoring version control code review agile sprint deployment architecture module interface documentation maintenance bug continuous",
    ),
    (
        "databases",
        "relational table query sql index transaction normalization join primary key foreign key schema acid concurrency lock replication backup view constraint optimizer b-tree",
    ),
    (
        "numerical methods",
        "approximation error interpolation newton method root finding iteration convergence stability floating point quadrature finite difference matrix solver condition number ode discretization mesh",
    ),
    (
        "probability",
        "random variable expectation probability distribution conditional independence bayes theorem binomial poisson normal central limit law large numbers variance markov chain sample space event joint",
    ),
    (
        "discrete mathematics",
        "set relation function graph proof induction combinatorics permutation combination logic predicate boolean lattice recurrence counting pigeonhole modular arithmetic prime tree",
    ),
    (
        "anatomy",
        "muscle bone nerve artery vein organ heart lung kidney liver skeletal tissue joint spinal cord brain digestive respiratory circulatory endocrine ligament",
    ),
    (
        "pharmacology",
        "drug dose receptor agonist antagonist absorption metabolism half-life toxicity side effect clinical trial efficacy prescription interaction bioavailability clearance therapeutic placebo",
    ),
    (
        "public health",
        "epidemiology incidence prevalence vaccination outbreak surveillance risk factor intervention screening mortality morbidity health policy cohort study prevention pandemic sanitation nutrition",
    ),
    (
        "environmental science",
        "pollution emission carbon climate change renewable energy sustainability waste recycling water quality air deforestation biodiversity greenhouse gas solar wind resource",
    ),
    (
        "architecture",
        "structure facade floor plan elevation material concrete steel timber daylight ventilation urban design sketch model zoning sustainability space circulation form function",
    ),
    (
        "music theory",
        "scale chord harmony melody rhythm interval key signature cadence counterpoint tempo meter modulation tonic dominant notation composition timbre dynamics motif",
    ),
    (
        "art history",
        "painting sculpture renaissance baroque impressionism modern perspective composition patron museum iconography fresco canvas abstract expressionism portrait landscape style movement",
    ),
    (
        "linguistics",
        "phoneme morpheme syntax semantics pragmatics grammar dialect language acquisition phonetics lexicon sentence structure tone corpus discourse bilingualism sociolinguistics variation",
    ),
    (
        "chinese literature",
        "classical poetry tang dynasty song lyric novel prose confucian daoist narrative allusion rhyme couplet essay vernacular drama opera calligraphy classic text",
    ),
    (
        "law",
        "contract tort liability statute precedent court judge plaintiff defendant evidence negligence damages appeal constitution criminal civil procedure jurisdiction property",
    ),
    (
        "management",
        "leadership strategy organization team motivation decision making planning control performance change culture stakeholder project resource negotiation communication structure goal",
    ),
    (
        "astronomy",
        "star galaxy planet orbit telescope light year redshift black hole supernova nebula cosmology big bang spectrum gravity solar system exoplanet luminosity dark matter",
    ),
    (
        "geology",
        "rock mineral plate tectonics earthquake volcano sediment erosion fossil stratigraphy magma crust mantle fault weathering igneous metamorphic groundwater landform",
    ),
    (
        "nutrition",
        "protein carbohydrate fat vitamin mineral calorie diet metabolism fiber obesity diabetes digestion energy balance supplement hydration meal plan deficiency cholesterol",
    ),
    (
        "robotics",
        "sensor actuator kinematics control loop pid motor trajectory localization mapping slam manipulator gripper feedback servo path planning vision autonomy controller",
    ),
    (
        "cryptography",
        "encryption decryption key cipher hash signature public key private key rsa aes certificate protocol integrity authentication random nonce attack block stream",
    ),
    (
        "human computer interaction",
        "usability user interface prototype evaluation interview persona task analysis accessibility interaction design wireframe heuristic feedback user study affordance cognitive load navigation",
    ),
    (
        "signal processing",
        "fourier transform frequency filter sampling aliasing convolution spectrum noise amplitude phase discrete signal impulse response bandwidth modulation wavelet quantization",
    ),
    (
        "quantum mechanics",
        "wave function operator eigenstate uncertainty superposition measurement spin hamiltonian schrodinger equation tunneling entanglement probability amplitude potential well quantization orbital",
    ),
    (
        "sports science",
        "training endurance strength aerobic anaerobic heart rate recovery injury biomechanics flexibility performance fatigue muscle oxygen exercise program coaching warm-up",
    ),
    (
        "journalism",
        "news source interview editor headline fact checking ethics reporting investigation media audience deadline press freedom bias story publication verification",
    ),
    (
        "education technology",
        "learning management system online course video lecture quiz discussion forum blended learning mooc gamification adaptive platform analytics digital tool flipped classroom",
    ),
    (
        "teacher education",
        "lesson plan classroom management pedagogy practicum mentor reflection differentiated instruction assessment student teacher curriculum observation inclusion questioning feedback",
    ),
    (
        "bioinformatics",
        "sequence alignment genome protein structure blast database phylogenetic tree gene expression microarray motif annotation variant calling read mapping assembly pipeline",
    ),
    (
        "urban planning",
        "zoning transportation land use housing density infrastructure public space community development policy sprawl transit neighborhood green space regeneration population",
    ),
]

_TEMPLATES = [
    "In week {w} of this course we study {a} and {b}. The lecture explains how {a} relates to {c}, and the assignment asks students to apply {d} to a short case.",
    "Key idea: {a}. When {b} changes, {c} follows; the worked example on slide {w} shows the steps, and the reading for next week discusses {d} in more depth.",
    "Students often confuse {a} with {b}. Remember that {c} is defined first, and {d} only makes sense once {a} is clear. Review the examples before the quiz.",
    "Learning outcome {w}: by the end of this unit you should be able to explain {a}, compare {b} with {c}, and evaluate an argument that uses {d}.",
    "The midterm covers {a}, {b} and {c}. Past questions ask you to define {d}, give one example, and explain why it matters for the course project.",
    "Lab {w}: measure {a} under two conditions, record {b}, and discuss whether {c} explains the difference. Include a paragraph on the limits of {d}.",
    "Reading notes: the author argues that {a} depends on {b}. A counter-argument from {c} suggests otherwise; in tutorial we will debate the role of {d}.",
    "Definition: {a} is the part of {b} that determines {c}. In practice, {d} is used to estimate it, as the second example of the handout shows.",
    "Discussion prompt: how would you teach {a} to first-year students? Use {b} as an analogy, point out a common mistake about {c}, and suggest an activity with {d}.",
    "Summary of chapter {w}: {a}, {b}, {c}. The chapter ends with {d}, which links this topic to the next unit of the syllabus.",
]

_QUESTION_TEMPLATES = [
    "how does {a} relate to {b}",
    "explain {a} with an example of {b}",
    "what is the difference between {a} and {b}",
    "{a} and {b} in the midterm",
    "why does {a} matter for {b}",
]


def subjects() -> list[tuple[str, list[str]]]:
    out = []
    for name, words in _SUBJECT_ROOTS[:SUBJECTS]:
        terms = words.split()
        out.append((name, terms[:TERMS_PER_SUBJECT]))
    return out


def _passage(rng, subject: tuple[str, list[str]]) -> str:
    _, terms = subject
    a, b, c, d = (terms[i] for i in rng.choice(len(terms), size=4, replace=False))
    template = _TEMPLATES[int(rng.integers(len(_TEMPLATES)))]
    return template.format(a=a, b=b, c=c, d=d, w=int(rng.integers(1, 17)))


def _edited(rng, text: str, subject: tuple[str, list[str]]) -> str:
    """A near-duplicate: two subject terms swapped for others of the subject, one sentence reworded."""
    _, terms = subject
    words = text.split(" ")
    positions = [i for i, w in enumerate(words) if w.strip(".,:;?") in terms]
    for i in rng.choice(positions, size=min(2, len(positions)), replace=False) if positions else []:
        words[i] = terms[int(rng.integers(len(terms)))] + ("." if words[i].endswith(".") else "")
    edited = " ".join(words)
    return (
        edited.replace("Remember that", "Note that")
        .replace("the assignment asks", "the homework asks")
        .replace("Review the examples", "Go over the examples")
        .replace("we will debate", "we discuss")
    )


def _cache_dir(root: Path) -> Path:
    return root / "var" / "bench" / f"retrieval-corpus-v{VERSION}"


def real_embeddings(root: Path, embed, rng_seed: int = 11) -> dict:
    """Generate and embed the real passages, pairs and nothing else; cached as .npz + .json."""
    directory = _cache_dir(root)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "real.npz"
    if path.exists():
        data = np.load(path)
        meta = json.loads((directory / "real.json").read_text())
        return {"vectors": data["vectors"], "pair_a": data["pair_a"], "pair_b": data["pair_b"], **meta}
    rng = np.random.default_rng(rng_seed)
    subs = subjects()
    passage_subject = rng.integers(0, len(subs), size=BASE_PASSAGES)
    texts = [_passage(rng, subs[int(s)]) for s in passage_subject]
    pair_index = rng.choice(BASE_PASSAGES, size=PAIRS, replace=False)
    edited = [_edited(rng, texts[int(i)], subs[int(passage_subject[int(i)])]) for i in pair_index]
    vectors = np.asarray(embed(texts), dtype=np.float32)
    edited_vectors = np.asarray(embed(edited), dtype=np.float32)
    np.savez(path, vectors=vectors, pair_a=vectors[pair_index], pair_b=edited_vectors)
    meta = {"texts": texts, "subjects": passage_subject.tolist()}
    (directory / "real.json").write_text(json.dumps(meta))
    return {"vectors": vectors, "pair_a": vectors[pair_index], "pair_b": edited_vectors, **meta}


class Displacement:
    """The near-duplicate displacement e(edited) − e(original), fitted: mean + top principal
    components + an isotropic remainder carrying the rest of the variance."""

    def __init__(self, pair_a: np.ndarray, pair_b: np.ndarray) -> None:
        diffs = pair_b - pair_a
        self.mean = diffs.mean(axis=0)
        centred = diffs - self.mean
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        variances = s**2 / (len(diffs) - 1)
        k = min(PCA_COMPONENTS, len(variances))
        self.components = vt[:k]
        self.scales = np.sqrt(variances[:k])
        rest = variances[k:].sum()
        self.isotropic = float(np.sqrt(rest / DIM)) if rest > 0 else 0.0

    def sample(self, rng, n: int) -> np.ndarray:
        z = rng.standard_normal((n, len(self.scales))).astype(np.float32) * self.scales
        out = self.mean + z @ self.components
        if self.isotropic:
            out += self.isotropic * rng.standard_normal((n, DIM)).astype(np.float32)
        return out.astype(np.float32)


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def layout(n: int, channels: int, shares: tuple[float, ...], rng) -> np.ndarray:
    """Channel index (0..channels-1) per row, rows shuffled: channel i < len(shares) holds
    shares[i] of all rows; the others split the rest evenly. Uploads over time interleave the
    channels in the heap, so the searched channel's rows are scattered, as on a live platform."""
    sizes = [int(round(n * s)) for s in shares]
    rest = n - sum(sizes)
    others = channels - len(shares)
    sizes += [rest // others + (1 if i < rest % others else 0) for i in range(others)]
    owner = np.repeat(np.arange(channels, dtype=np.int32), sizes)
    rng.shuffle(owner)
    return owner


def derive(real: dict, n: int, channels: int, shares: tuple[float, ...], seed: int = 5):
    """(channel per row, vectors float32 [n, DIM], base a, base b, alpha) for n derived chunks."""
    rng = np.random.default_rng(seed)
    base = _normalise(real["vectors"].astype(np.float32))
    by_subject: dict[int, np.ndarray] = {}
    passage_subject = np.asarray(real["subjects"])
    for s in range(SUBJECTS):
        by_subject[s] = np.flatnonzero(passage_subject == s)
    channel_subject = rng.integers(0, SUBJECTS, size=channels)
    owner = layout(n, channels, shares, rng)
    displacement = Displacement(real["pair_a"], real["pair_b"])
    row_subject = channel_subject[owner]
    a = np.empty(n, dtype=np.int32)
    b = np.empty(n, dtype=np.int32)
    for s in range(SUBJECTS):
        rows = np.flatnonzero(row_subject == s)
        pool = by_subject[s]
        a[rows] = pool[rng.integers(0, len(pool), size=len(rows))]
        b[rows] = pool[rng.integers(0, len(pool), size=len(rows))]
    alpha = rng.uniform(0.55, 1.0, size=n).astype(np.float32)
    duplicate = rng.random(n) < DUPLICATE_SHARE
    alpha[duplicate] = 1.0
    vectors = np.empty((n, DIM), dtype=np.float32)
    step = 100_000
    for start in range(0, n, step):
        sl = slice(start, min(n, start + step))
        mixed = alpha[sl, None] * base[a[sl]] + (1 - alpha[sl, None]) * base[b[sl]]
        noise = displacement.sample(rng, sl.stop - sl.start)
        noise[duplicate[sl]] = 0.0
        vectors[sl] = _normalise(mixed + noise)
    return owner, channel_subject, vectors, a, b, alpha, duplicate


def chunk_text(texts: list[str], a: int, b: int, alpha: float) -> str:
    """The end of passage a followed by the start of passage b, in the proportions of the mix."""
    first, second = texts[a].split(" "), texts[b].split(" ")
    if alpha >= 0.999:
        return texts[a]
    keep_a = max(1, int(round(alpha * len(first))))
    keep_b = max(1, int(round((1 - alpha) * len(second))))
    return " ".join(first[len(first) - keep_a :] + second[:keep_b])


def queries(subject: tuple[str, list[str]], count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    _, terms = subject
    out = []
    for i in range(count):
        a, b = (terms[j] for j in rng.choice(len(terms), size=2, replace=False))
        out.append(_QUESTION_TEMPLATES[i % len(_QUESTION_TEMPLATES)].format(a=a, b=b))
    return out


def fit_report(real: dict, seed: int = 3) -> dict:
    """Cosine of real near-duplicate pairs against pairs made by the fitted perturbation."""
    rng = np.random.default_rng(seed)
    displacement = Displacement(real["pair_a"], real["pair_b"])
    a = _normalise(real["pair_a"])
    real_cos = np.sum(a * _normalise(real["pair_b"]), axis=1)
    derived = _normalise(a + displacement.sample(rng, len(a)))
    derived_cos = np.sum(a * derived, axis=1)
    base = _normalise(real["vectors"])
    sample = base[rng.choice(len(base), size=min(500, len(base)), replace=False)]
    sims = sample @ sample.T
    off = sims[~np.eye(len(sample), dtype=bool)]
    return {
        "real_near_duplicate_cos_mean": round(float(real_cos.mean()), 3),
        "derived_near_duplicate_cos_mean": round(float(derived_cos.mean()), 3),
        "real_near_duplicate_cos_p10": round(float(np.percentile(real_cos, 10)), 3),
        "derived_near_duplicate_cos_p10": round(float(np.percentile(derived_cos, 10)), 3),
        "real_passage_pair_cos_mean": round(float(off.mean()), 3),
    }


def fingerprint(n: int, channels: int, shares: tuple[float, ...]) -> str:
    distinct = [DISTINCT_VERSION, distinct_channels(n)] if distinct_channels(n) else []
    return hashlib.sha1(
        json.dumps([VERSION, n, channels, shares, BASE_PASSAGES, PAIRS, *distinct]).encode()
    ).hexdigest()[:10]


# --------------------------------------------------------------------------- distinct passages

DISTINCT_VERSION = 1
DISTINCT_FROM_ROWS = 1_000_000  # platforms this big build their 10 % channel from distinct passages
DISTINCT_SHARE_INDEX = 2  # the 10 % channel (SHARES[2] of bench/retrieval.py)


def distinct_channels(n: int) -> list[int]:
    """The channel indexes built from distinct passages on a platform of n chunks."""
    return [DISTINCT_SHARE_INDEX] if n >= DISTINCT_FROM_ROWS else []


_NOUNS = (
    "argument assumption benchmark boundary case study category claim comparison concept condition "
    "constraint context criterion dataset debate definition diagram dimension evidence example "
    "experiment explanation factor feature finding framework hypothesis implication indicator "
    "interpretation intuition limitation measurement mechanism method metric misconception model "
    "notation observation outcome parameter pattern perspective principle problem procedure process "
    "property proposition question reasoning relationship representation requirement result rule "
    "sample scenario simulation solution source strategy structure summary survey technique tension "
    "theorem threshold tool trade-off trend variable variation workflow exercise worksheet tutorial "
    "seminar textbook appendix chapter figure table lecture handout rubric portfolio checkpoint"
).split()
_VERBS = (
    "derive compare contrast illustrate justify estimate predict verify classify summarise "
    "critique reconstruct formalise approximate decompose generalise test revise sketch trace "
    "measure rank model simulate defend question locate annotate integrate adapt extend refine"
).split()
_ADJECTIVES = (
    "classical modern simplified rigorous informal empirical theoretical practical recent early "
    "standard unusual surprising common subtle central peripheral local global linear nonlinear "
    "qualitative quantitative historical contemporary introductory advanced partial complete "
    "robust fragile explicit implicit formal applied abstract concrete"
).split()
_NAMES = (
    "Chen Lin Huang Chang Wang Wu Tsai Liu Yang Hsu Cheng Kuo Hsieh Lai Hung Tseng Chou Yeh Su "
    "Smith Garcia Okafor Novak Rossi Tanaka Kim Silva Muller Dubois Ivanova Haddad Nguyen Larsen"
).split()
_SENTENCES = (
    "Section {n} of {name}'s {adj} notes uses {term} to {verb} the {noun}.",
    "We {verb} {term} by looking at a {adj} {noun} from the {year} survey.",
    "In tutorial {n}, pairs {verb} how the {noun} changes when {term} is held fixed.",
    "A {adj} {noun} shows why {term} matters for the {noun2}.",
    "{name} ({year}) argues that the {noun} depends less on {term} than on the {noun2}.",
    "Problem {n}: {verb} the {adj} {noun} and report the {noun2} in a short table.",
    "The {noun} in figure {n} is {adj}; compare it with the {noun2} of the previous week.",
    "Students who {verb} the {noun} first usually find the {noun2} easier.",
    "Keep a {adj} {noun} in mind: {term} is not the same as the {noun2}.",
    "Lab group {n} measured the {noun} {n2} times and found a {adj} {noun2}.",
    "The reading by {name} gives a {adj} {noun} with {n} worked steps.",
    "Before the checkpoint, {verb} one {noun} of your own and explain its {noun2}.",
    "Our {adj} {noun} for {term} fails when the {noun2} is large, as case {n} shows.",
    "Page {n} of the handout lists {n2} ways to {verb} a {noun}.",
    "In {year}, {name} proposed a {adj} {noun} that later courses adopted.",
    "Write two sentences that {verb} the {noun} and the {noun2}.",
    "The quiz of week {n} asks for a {adj} {noun}; partial credit needs the {noun2}.",
    "Think of {term} as a {noun}: the {adj} version hides the {noun2}.",
    "A common mistake is to {verb} the {noun} before the {noun2} is defined.",
    "Discussion {n}: is the {adj} {noun} of {name} still useful today?",
)


def distinct_passages(subject: tuple[str, list[str]], count: int, seed: int) -> list[str]:
    """`count` different passages about one subject: three sentences each, drawn from a bank of
    sentence forms with a course vocabulary, names, years and numbers; one or two of the
    subject's core terms in each (no two passages the same text)."""
    rng = np.random.default_rng(seed)
    _, terms = subject
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        sentences = []
        term_slots = set(rng.choice(3, size=int(rng.integers(1, 3)), replace=False).tolist())
        for slot, form in enumerate(rng.choice(len(_SENTENCES), size=3, replace=False)):
            template = _SENTENCES[int(form)]
            term = (
                terms[int(rng.integers(len(terms)))]
                if slot in term_slots
                else _NOUNS[int(rng.integers(len(_NOUNS)))]
            )
            noun, noun2 = (_NOUNS[int(i)] for i in rng.choice(len(_NOUNS), size=2, replace=False))
            sentences.append(
                template.format(
                    term=term,
                    noun=noun,
                    noun2=noun2,
                    verb=_VERBS[int(rng.integers(len(_VERBS)))],
                    adj=_ADJECTIVES[int(rng.integers(len(_ADJECTIVES)))],
                    name=_NAMES[int(rng.integers(len(_NAMES)))],
                    year=int(rng.integers(1950, 2025)),
                    n=int(rng.integers(1, 40)),
                    n2=int(rng.integers(2, 60)),
                )
            )
        text = " ".join(sentence[0].upper() + sentence[1:] for sentence in sentences)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def distinct_embeddings(root: Path, embed, subject: tuple[str, list[str]], count: int, seed: int) -> dict:
    """The distinct passages of one channel and their real vectors, cached under var/bench."""
    directory = _cache_dir(root)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"distinct-v{DISTINCT_VERSION}-{seed}-{count}.npz"
    if path.exists():
        data = np.load(path)
        return {"texts": [str(t) for t in data["texts"]], "vectors": data["vectors"]}
    texts = distinct_passages(subject, count, seed)
    vectors = np.empty((count, DIM), dtype=np.float32)
    # Embedded in blocks, each kept as it is done: an interrupted build (hours on two shared
    # cores) resumes where it stopped.
    step = 5_000
    for start in range(0, count, step):
        block = directory / f"distinct-v{DISTINCT_VERSION}-{seed}-{count}-{start}.npy"
        if not block.exists():
            np.save(block, np.asarray(embed(texts[start : start + step]), dtype=np.float32))
        vectors[start : start + step] = np.load(block)
    vectors = _normalise(vectors)
    np.savez(path, vectors=vectors, texts=np.array(texts))
    for start in range(0, count, step):
        (directory / f"distinct-v{DISTINCT_VERSION}-{seed}-{count}-{start}.npy").unlink()
    return {"texts": texts, "vectors": vectors}


def distinct_report(vectors: np.ndarray, sample: int = 1000, seed: int = 9) -> dict:
    """Nearest-neighbour cosine of a sample of the distinct passages among all of them: how close
    the closest other passage is (a near-copy would read ≥ 0.95)."""
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    best = np.full(len(picked), -1.0, dtype=np.float32)
    for start in range(0, len(vectors), 20_000):
        block = vectors[start : start + 20_000]
        sims = vectors[picked] @ block.T
        for row, index in enumerate(picked):  # a passage is not its own neighbour
            if start <= index < start + len(block):
                sims[row, index - start] = -1.0
        best = np.maximum(best, sims.max(axis=1))
    return {
        "passages": int(len(vectors)),
        "nearest_cos_p50": round(float(np.percentile(best, 50)), 3),
        "nearest_cos_p99": round(float(np.percentile(best, 99)), 3),
        "nearest_cos_max": round(float(best.max()), 3),
        "near_copies_in_sample": int((best >= 0.95).sum()),
    }
