"""Demo catalogue: a small, plausible Taiwanese-university catalogue, every row is_demo=True.

The universities are real institutions (their public websites are linked); the courses,
advisors, papers and curriculum rows are invented for demonstrations and say DEMO wherever they
are shown. Demo advisors have no external profile link (they are fictional people), so their
citations point at their page in this app; demo papers have no DOI for the same reason.
Loading is idempotent: rows are found by their natural keys and updated in place."""

from __future__ import annotations

from django.db import transaction

from channels_app.models import Channel

from .models import (
    Advisor,
    AdvisorPaper,
    Course,
    CurriculumTopic,
    PlatformDocument,
    ResearchCluster,
    TeamPaper,
    University,
)

UNIVERSITIES = [
    (
        "ntnu",
        "國立臺灣師範大學",
        "National Taiwan Normal University",
        "臺北市",
        "https://www.ntnu.edu.tw",
        "以師資培育與教育研究見長的綜合大學。A comprehensive university known for teacher education and educational research.",
    ),
    (
        "ntu",
        "國立臺灣大學",
        "National Taiwan University",
        "臺北市",
        "https://www.ntu.edu.tw",
        "臺灣規模最大的研究型大學。Taiwan's largest research university.",
    ),
    (
        "nthu",
        "國立清華大學",
        "National Tsing Hua University",
        "新竹市",
        "https://www.nthu.edu.tw",
        "以理工與資訊科學研究著稱。Known for science, engineering and computer science.",
    ),
    (
        "ncku",
        "國立成功大學",
        "National Cheng Kung University",
        "臺南市",
        "https://www.ncku.edu.tw",
        "南臺灣的綜合研究型大學。A comprehensive research university in southern Taiwan.",
    ),
]

COURSES = [
    (
        "ntnu",
        "EDS101",
        "教育資料科學導論",
        "Introduction to Educational Data Science",
        "教育學系 Department of Education",
        3,
        "undergraduate",
        "介紹學習資料如何被蒐集、分析與負責任地使用，結合 Python 實作與教育研究案例。"
        "How learning data is collected, analysed and used responsibly, with Python exercises and cases from educational research.",
        [
            "學習分析導論 Introduction to learning analytics",
            "Bloom 認知層次 Bloom's taxonomy of cognitive levels",
            "資料倫理與 IRB Data ethics and IRB",
            "檢索增強生成 RAG Retrieval-augmented generation",
            "描述統計與視覺化 Descriptive statistics and visualisation",
            "預測模型與學習成效 Predictive models of learning outcomes",
            "對話紀錄分析 Analysing chat logs",
            "期末專題發表 Final project presentations",
        ],
    ),
    (
        "ntnu",
        "EDS520",
        "學習分析方法",
        "Learning Analytics Methods",
        "教育學系 Department of Education",
        3,
        "graduate",
        "研究所層級的學習分析方法：序列分析、社會網絡分析、多層次模型與可解釋 AI。"
        "Graduate methods: sequence analysis, social network analysis, multilevel models and explainable AI.",
        [
            "學習分析研究設計 Research design",
            "序列與歷程探勘 Sequence and process mining",
            "社會網絡分析 Social network analysis",
            "多層次模型 Multilevel models",
            "可解釋 AI Explainable AI for education",
            "研究倫理與資料治理 Research ethics and data governance",
        ],
    ),
    (
        "ntu",
        "MATH101",
        "微積分（一）",
        "Calculus I",
        "數學系 Department of Mathematics",
        4,
        "undergraduate",
        "極限、連續、微分與積分的基本概念與應用。Limits, continuity, differentiation and integration with applications.",
        [
            "函數與極限 Functions and limits",
            "連續性 Continuity",
            "導數 Derivatives",
            "微分的應用 Applications of derivatives",
            "定積分 Definite integrals",
            "微積分基本定理 The fundamental theorem of calculus",
        ],
    ),
    (
        "ntu",
        "CSIE1212",
        "資料結構與演算法",
        "Data Structures and Algorithms",
        "資訊工程學系 Computer Science and Information Engineering",
        3,
        "undergraduate",
        "常用資料結構與演算法設計、分析。Common data structures and the design and analysis of algorithms.",
        [
            "複雜度分析 Complexity analysis",
            "陣列、串列與堆疊 Arrays, lists and stacks",
            "樹與堆積 Trees and heaps",
            "雜湊 Hashing",
            "圖論演算法 Graph algorithms",
            "動態規劃 Dynamic programming",
        ],
    ),
    (
        "nthu",
        "CS135",
        "程式設計（一）",
        "Introduction to Programming I",
        "資訊工程學系 Computer Science",
        3,
        "undergraduate",
        "以 Python 入門程式設計與計算思維。Programming and computational thinking with Python.",
        [
            "計算思維 Computational thinking",
            "變數與運算 Variables and expressions",
            "條件與迴圈 Conditionals and loops",
            "函式 Functions",
            "串列與字典 Lists and dictionaries",
            "檔案與資料處理 Files and data processing",
        ],
    ),
    (
        "ncku",
        "EDU230",
        "數位學習設計",
        "Digital Learning Design",
        "教育研究所 Institute of Education",
        2,
        "general",
        "數位學習的教學設計原則、評量與生成式 AI 的課堂應用。Instructional design for digital learning, assessment and generative AI in class.",
        [
            "教學設計模式 Instructional design models",
            "多媒體學習原則 Multimedia learning principles",
            "形成性評量 Formative assessment",
            "生成式 AI 與學習 Generative AI and learning",
        ],
    ),
]

CURRICULUM = [
    (
        "D-7-1",
        "math",
        "7-9",
        "統計圖表 Statistical charts",
        "能整理資料並繪製長條圖、折線圖、圓形圖，解讀圖表中的趨勢。Organise data and read bar, line and pie charts.",
    ),
    (
        "D-10-1",
        "math",
        "10-12",
        "一維數據分析 One-variable data analysis",
        "理解平均數、中位數、標準差與盒狀圖，並用以比較資料分布。Mean, median, standard deviation and box plots to compare distributions.",
    ),
    (
        "D-10-2",
        "math",
        "10-12",
        "二維數據分析 Two-variable data analysis",
        "以散布圖、相關係數與最適直線描述兩變量關係，辨識相關不等於因果。Scatter plots, correlation and the least-squares line; correlation is not causation.",
    ),
    (
        "D-11-1",
        "math",
        "10-12",
        "條件機率與貝氏定理 Conditional probability and Bayes' theorem",
        "能計算條件機率、判斷獨立事件並應用貝氏定理於診斷類問題。Conditional probability, independence and Bayes' theorem.",
    ),
    (
        "F-10-1",
        "math",
        "10-12",
        "一次與二次函數 Linear and quadratic functions",
        "認識函數圖形的平移與伸縮，並以函數建模生活情境。Transformations of graphs; modelling with functions.",
    ),
    (
        "Ka-IV-1",
        "science",
        "7-9",
        "波的特徵 Characteristics of waves",
        "認識波峰、波谷、波長、頻率、波速與振幅。Crest, trough, wavelength, frequency, speed and amplitude.",
    ),
    (
        "PKa-Vc-1",
        "science",
        "10-12",
        "波動與聲音 Waves and sound",
        "理解波的疊加、干涉與都卜勒效應，並以實驗驗證。Superposition, interference and the Doppler effect, tested by experiment.",
    ),
    (
        "INd-IV-1",
        "science",
        "7-9",
        "科學探究與資料 Scientific inquiry and data",
        "能提出可驗證的問題、設計實驗、記錄並分析數據。Pose testable questions, design experiments, record and analyse data.",
    ),
    (
        "資A-IV-1",
        "information_technology",
        "7-9",
        "演算法基本概念 Basic concepts of algorithms",
        "能以流程圖或虛擬碼描述演算法，理解循序、選擇與重複結構。Describe algorithms in flowcharts or pseudocode; sequence, selection, repetition.",
    ),
    (
        "資P-IV-1",
        "information_technology",
        "7-9",
        "程式語言基本概念 Programming basics",
        "能以程式語言實作簡單問題，認識變數、條件與迴圈。Implement simple programs with variables, conditionals and loops.",
    ),
    (
        "資A-V-1",
        "information_technology",
        "10-12",
        "資料結構與演算法 Data structures and algorithms",
        "認識陣列、堆疊、佇列與排序搜尋演算法，並分析其效率。Arrays, stacks, queues, sorting and searching, and their efficiency.",
    ),
    (
        "資H-V-1",
        "information_technology",
        "10-12",
        "資訊科技與人類社會 IT and society",
        "探討個人資料保護、演算法偏誤與人工智慧的社會影響。Personal data protection, algorithmic bias and the social impact of AI.",
    ),
]

CLUSTERS = [
    (
        "learning-analytics",
        "學習分析與教育資料探勘",
        "Learning Analytics and Educational Data Mining",
        "以學習歷程資料理解並改善學習，包含預測模型、歷程探勘與儀表板。Using learning-trace data to understand and improve learning.",
        "learning analytics, educational data mining, dashboards, 學習分析",
    ),
    (
        "ai-in-education",
        "人工智慧輔助教學",
        "AI in Education",
        "大型語言模型助教、檢索增強生成與自動評量的設計與評估。Design and evaluation of LLM tutors, RAG and automated assessment.",
        "LLM, RAG, intelligent tutoring, automated assessment, 生成式 AI",
    ),
    (
        "stem-education",
        "數理與科技教育",
        "STEM Education",
        "數學、科學與資訊科技的教學順序、迷思概念與課程銜接。Teaching sequences, misconceptions and the school–university transition in STEM.",
        "mathematics education, science education, computational thinking, 課程銜接",
    ),
]

ADVISORS = [
    (
        "lin-yu-ting",
        "林宇庭",
        "Lin Yu-Ting",
        "教授 Professor",
        "ntnu",
        "教育學系 Department of Education",
        "學習分析、教育資料探勘、學習儀表板 Learning analytics, educational data mining, dashboards",
        ["learning-analytics"],
        [
            (
                "Predicting course completion from early clickstream data in Taiwanese MOOCs",
                2023,
                "Computers & Education",
                "Uses the first two weeks of clickstream data from 12 MOOCs to predict completion; interpretable models perform close to deep models.",
            ),
            (
                "教師如何解讀學習儀表板：一項混合方法研究",
                2021,
                "教育科學研究期刊",
                "訪談與眼動資料顯示，教師多依賴摘要指標而忽略分布資訊。Teachers rely on summary indicators more than on distributions.",
            ),
        ],
    ),
    (
        "chen-wei-lun",
        "陳威倫",
        "Chen Wei-Lun",
        "副教授 Associate Professor",
        "ntu",
        "資訊工程學系 Computer Science and Information Engineering",
        "大型語言模型、檢索增強生成、教育對話系統 LLMs, retrieval-augmented generation, educational dialogue systems",
        ["ai-in-education"],
        [
            (
                "Grounding LLM teaching assistants in course materials with retrieval-augmented generation",
                2024,
                "IEEE Transactions on Learning Technologies",
                "A RAG assistant answering from lecture slides reduced unsupported answers by 41% compared with an ungrounded model in two courses.",
            ),
            (
                "Citation faithfulness of AI research assistants for students",
                2025,
                "Proceedings of Learning@Scale",
                "Measures how often cited passages support generated claims; verification by a second model raised faithfulness from 78% to 93%.",
            ),
        ],
    ),
    (
        "huang-mei-ling",
        "黃美玲",
        "Huang Mei-Ling",
        "教授 Professor",
        "ncku",
        "教育研究所 Institute of Education",
        "Bloom 認知層次、提問分析、形成性評量 Bloom's taxonomy, question analysis, formative assessment",
        ["learning-analytics", "stem-education"],
        [
            (
                "Automatic classification of student questions by Bloom's cognitive level",
                2022,
                "British Journal of Educational Technology",
                "Fine-tuned language models classify student questions into Bloom levels with substantial agreement with expert raters (κ = 0.71).",
            ),
            (
                "大學生提問層次與學習成效之關聯",
                2020,
                "課程與教學季刊",
                "高層次提問比例與期末成績呈中度正相關。The share of higher-order questions correlates moderately with final grades.",
            ),
        ],
    ),
    (
        "wu-chih-hao",
        "吳志豪",
        "Wu Chih-Hao",
        "助理教授 Assistant Professor",
        "nthu",
        "資訊工程學系 Computer Science",
        "程式教育、自動回饋、計算思維 Programming education, automated feedback, computational thinking",
        ["ai-in-education", "stem-education"],
        [
            (
                "LLM-generated hints for novice programmers: helpful or harmful?",
                2024,
                "ACM ITiCSE",
                "Students given LLM hints solved more exercises but transferred less to new problems unless hints were Socratic.",
            ),
            (
                "Computational thinking trajectories from high school to university",
                2023,
                "Journal of Educational Computing Research",
                "Tracks 640 students from the 108 curriculum into CS1; prior algorithm courses predict early but not final CS1 performance.",
            ),
        ],
    ),
    (
        "tsai-pei-chun",
        "蔡佩君",
        "Tsai Pei-Chun",
        "副教授 Associate Professor",
        "ntnu",
        "數學系 Department of Mathematics",
        "數學教育、統計素養、高中與大學銜接 Mathematics education, statistical literacy, school-to-university transition",
        ["stem-education"],
        [
            (
                "Statistical literacy gaps between the senior-high curriculum and first-year statistics",
                2022,
                "Educational Studies in Mathematics",
                "Compares curriculum goals (D-10-1, D-10-2) with first-year statistics exams; variability and correlation are the weakest links.",
            ),
            (
                "從二維數據到迴歸：大一統計課的教學順序設計",
                2024,
                "科學教育學刊",
                "以散布圖與相關係數銜接迴歸分析之教學順序，改善學生對迴歸係數的理解。A teaching sequence from scatter plots to regression.",
            ),
        ],
    ),
    (
        "kuo-chia-hung",
        "郭家宏",
        "Kuo Chia-Hung",
        "教授 Professor",
        "ntu",
        "物理學系 Department of Physics",
        "科學教育、迷思概念、探究式實驗 Science education, misconceptions, inquiry-based labs",
        ["stem-education"],
        [
            (
                "Persistent misconceptions about waves from junior high to university physics",
                2021,
                "Physical Review Physics Education Research",
                "A concept inventory given to 1,200 students shows wave-speed misconceptions persisting from grade 8 to first-year physics.",
            ),
            (
                "Inquiry labs with sensor data in first-year physics",
                2023,
                "International Journal of Science Education",
                "Sensor-based inquiry labs improved students' data-analysis skills compared with recipe labs.",
            ),
        ],
    ),
]

TEAM_PAPERS = [
    (
        "uedu-deep-research-2026",
        "Uedu Deep Research: A ReAct-based multi-step research mode for university learners",
        "Chang, C.-K.",
        2026,
        "Uedu Platform",
        "Describes the plan–act–reflect–synthesize loop, claim–evidence binding and five layers of cost and safety defences.",
        "deep research, ReAct, citations, 深度研究",
    ),
    (
        "uedu-bloom-classroomgpt-2025",
        "Bloom-level classification of student questions in ClassroomGPT",
        "Uedu team",
        2025,
        "Uedu Technical Report",
        "How the platform tags every student question with a Bloom cognitive level and how teachers use the signal.",
        "Bloom's taxonomy, ClassroomGPT, question analysis",
    ),
    (
        "uedu-education-omics-2025",
        "Education-omics: multi-dimensional learning behaviour data on the Uedu platform",
        "Uedu team",
        2025,
        "Uedu Technical Report",
        "Introduces the Cognomics, Linguomics, Sociomics and Ethicomics dimensions and the data each feature contributes.",
        "education-omics, learning analytics, data governance",
    ),
]

DOCUMENTS = [
    (
        "deep-research-guide",
        "Deep Research 使用說明 How to use Deep Research",
        "public",
        None,
        "Deep Research 會規劃子問題、呼叫工具蒐集證據並整合成帶引用的答案。學生每日可使用 20 次，助教 40 次，教師不限。"
        "單次研究最多 30 步、200,000 tokens、10 分鐘。本答案由 AI 整合多個資料來源，請自行核對引用內容；不可直接用於作業繳交。\n"
        "Deep Research plans sub-questions, gathers evidence with tools and writes a cited answer. Students have 20 researches a day, "
        "TAs 40, teachers no limit. One research runs at most 30 steps, 200,000 tokens and 10 minutes. Check the citations yourself; "
        "do not hand in an answer as your own work.",
    ),
    (
        "data-governance",
        "資料治理與 IRB 說明 Data governance and IRB",
        "public",
        None,
        "Deep Research 的學生使用資料涵蓋於 Uedu 既有的 IRB 核准（NTU-REC 202507EM058）。研究者須簽署研究者責任書並經匯出同意流程才能匯出資料。\n"
        "Student Deep Research data is covered by Uedu's IRB approval NTU-REC 202507EM058. Researchers sign a responsibility "
        "statement and go through the export consent process before any export.",
    ),
    (
        "eds101-final-project",
        "EDS101 期末專題規範 Final project guidelines",
        "channel",
        "demo-course",
        "期末專題以小組進行，需分析一份去識別化的學習資料集並提出教學建議。評分：問題界定 20%、分析方法 30%、倫理考量 20%、發表 30%。"
        "使用 Deep Research 時須在報告中註明，並自行核對所有引用。\n"
        "Groups analyse a de-identified learning data set and make teaching recommendations. Grading: problem 20%, methods 30%, "
        "ethics 20%, presentation 30%. Say where you used Deep Research and check every citation yourself.",
    ),
    (
        "super-ta-export-procedure",
        "超級助教資料匯出作業程序 Super TA data export procedure",
        "staff",
        None,
        "超級助教匯出頻道資料前須簽署保密協議（NDA），匯出檔案僅含去識別化欄位，並於 30 日內刪除。\n"
        "Before exporting channel data a Super TA signs the NDA; exports hold de-identified fields only and are deleted within 30 days.",
    ),
]


@transaction.atomic
def load_demo_catalogue() -> dict[str, int]:
    demo = {"is_demo": True}
    universities = {}
    for slug, name, name_en, city, website, description in UNIVERSITIES:
        universities[slug], _ = University.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "name_en": name_en,
                "city": city,
                "website": website,
                "description": description,
                **demo,
            },
        )
    for uni, code, name, name_en, department, credits, level, description, weeks in COURSES:
        Course.objects.update_or_create(
            university=universities[uni],
            code=code,
            defaults={
                "name": name,
                "name_en": name_en,
                "department": department,
                "credits": credits,
                "level": level,
                "description": description,
                "weekly_topics": weeks,
                **demo,
            },
        )
    for code, subject, band, topic, goals in CURRICULUM:
        CurriculumTopic.objects.update_or_create(
            curriculum_code=code,
            defaults={
                "subject": subject,
                "grade_band": band,
                "topic": topic,
                "learning_goals": goals,
                **demo,
            },
        )
    clusters = {}
    for slug, name, name_en, description, keywords in CLUSTERS:
        clusters[slug], _ = ResearchCluster.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "name_en": name_en,
                "description": description,
                "keywords": keywords,
                **demo,
            },
        )
    papers = 0
    for slug, name, name_en, title, uni, department, interests, cluster_slugs, advisor_papers in ADVISORS:
        advisor, _ = Advisor.objects.update_or_create(
            slug=slug,
            defaults={
                "name": name,
                "name_en": name_en,
                "title": title,
                "university": universities[uni],
                "department": department,
                "research_interests": interests,
                **demo,
            },
        )
        advisor.clusters.set([clusters[c] for c in cluster_slugs])
        for paper_title, year, venue, abstract in advisor_papers:
            AdvisorPaper.objects.update_or_create(
                advisor=advisor,
                title=paper_title,
                defaults={"authors": name_en, "year": year, "venue": venue, "abstract": abstract, **demo},
            )
            papers += 1
    for slug, title, authors, year, venue, abstract, keywords in TEAM_PAPERS:
        TeamPaper.objects.update_or_create(
            slug=slug,
            defaults={
                "title": title,
                "authors": authors,
                "year": year,
                "venue": venue,
                "abstract": abstract,
                "keywords": keywords,
                **demo,
            },
        )
    documents = 0
    for slug, title, visibility, channel_slug, body in DOCUMENTS:
        channel = Channel.objects.filter(slug=channel_slug).first() if channel_slug else None
        if channel_slug and channel is None:
            continue  # the demo channel is not there (catalogue loaded on its own): skip its document
        PlatformDocument.objects.update_or_create(
            slug=slug,
            defaults={"title": title, "body": body, "visibility": visibility, "channel": channel, **demo},
        )
        documents += 1
    return {
        "universities": len(UNIVERSITIES),
        "courses": len(COURSES),
        "curriculum topics": len(CURRICULUM),
        "research clusters": len(CLUSTERS),
        "advisors": len(ADVISORS),
        "advisor papers": papers,
        "team papers": len(TEAM_PAPERS),
        "platform documents": documents,
    }
