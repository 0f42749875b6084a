"""Cross-language worlds of dataset v3: a question in one language whose only gold passage is in
the other. Taiwanese courses teach from English handouts and slides while students ask
in Chinese, and an exchange student asks in English over Chinese handouts.

Each world is one course file written in one language, which glosses its key terms once in the
other, on a page of their own, as such files do (形成性評量 beside "formative assessment"): the
gold paragraphs themselves are in the file's language only. Two English files with Chinese
questions, two Chinese files with English questions; seven questions each way.

`tests/channels_app/test_bilingual_retrieval.py` and `bench/bilingual.py` search these questions
over one channel holding every file of the slice (and the demo course's materials) and measure the
material search's recall@5 with and without translations."""

from __future__ import annotations

from evaluation.datasets.build_v3_common import at, fact, item, material, page

ASSESSMENT = material(
    "edu230-assessment-design.pdf",
    [
        page(
            "EDU230 Assessment design: key terms",
            [
                "This handout uses the following terms; the Chinese names are those of the Taiwanese assessment literature.",
                "formative assessment 形成性評量",
                "summative assessment 總結性評量",
                "rubric 評分規準",
                "peer assessment 同儕互評",
                "self-assessment 自我評量",
            ],
        ),
        page(
            "Formative and summative assessment",
            [
                "Formative assessment takes place while students are still learning: short quizzes, exit tickets and "
                "drafts tell the teacher what to reteach, and their marks usually do not count towards the final grade. "
                "Summative assessment comes at the end of a unit or a semester and certifies what each student has "
                "achieved, as a final exam or a project grade does.",
                "A single task can serve both purposes. A midterm exam is summative for the grade book, but when the "
                "teacher goes through the most common mistakes in the next lesson it also works formatively.",
            ],
        ),
        page(
            "Writing a rubric",
            [
                "A rubric lists the criteria of a task and describes each performance level with observable behaviour. "
                "Write 'cites at least two sources and explains how they differ' rather than vague adjectives such as "
                "'good' or 'excellent', so that two markers give the same work the same level.",
                "Four levels are usually enough. An even number of levels stops markers from choosing the middle level "
                "by default when they are unsure.",
            ],
        ),
        page(
            "Peer and self-assessment",
            [
                "Peer assessment is fairer when students mark anonymous work with the same rubric as the teacher, and "
                "first practise on sample essays whose scores they compare with the teacher's; this calibration reduces "
                "friendship bias and overly harsh marking.",
                "Self-assessment asks students to judge their own work against the criteria before they hand it in. It "
                "is most useful when students must point to evidence in the work for each level they claim.",
            ],
        ),
    ],
)

ONLINE = material(
    "edu245-online-teaching-slides.pptx",
    [
        page(
            "Key terms",
            [
                "flipped classroom 翻轉教室",
                "asynchronous discussion forum 非同步討論區",
                "cognitive load theory 認知負荷理論",
                "learning management system 學習管理系統",
            ],
        ),
        page(
            "Flipping a course",
            [
                "In a flipped classroom, students watch short videos before class and spend class time on problems "
                "and discussion. Keep each pre-class video under ten minutes and end it with two or three questions "
                "that students answer online.",
                "Check the answers before class: the questions most students missed are the first thing to discuss.",
            ],
        ),
        page(
            "Online discussion",
            [
                "Participation in an asynchronous discussion forum rises when each week opens with one concrete prompt, "
                "when every reply must quote a classmate, and when a teaching assistant answers within 48 hours.",
                "Grade a few substantial posts per student rather than counting every short reply.",
            ],
        ),
        page(
            "Designing slides",
            [
                "Cognitive load theory recommends slides that do not repeat in text what the speaker says aloud: show a "
                "diagram with a few labels and narrate it, and remove decorative pictures that carry no content.",
                "Split a complex procedure over several slides, one step each, instead of one dense slide.",
            ],
        ),
    ],
)

STATISTICS = material(
    "EDU150_教育統計講義.docx",
    [
        page(
            "名詞對照（Key terms）",
            [
                "本講義的重要名詞與英文原文對照如下，閱讀英文文獻時可參考。",
                "信度（reliability）",
                "效度（validity）",
                "效果量（effect size）",
                "常模參照測驗（norm-referenced test）",
                "標準參照測驗（criterion-referenced test）",
            ],
        ),
        page(
            "一、信度與效度",
            [
                "信度指的是測驗結果的一致性：同一群學生隔兩週再考一次，分數的高低順序應大致相同。效度指的是測驗是否真的測到"
                "想測的能力；一份只考背誦的期末考，即使信度很高，也不能代表學生的應用能力。",
                "提高信度的做法包括增加題數、統一評分標準，以及讓兩位評分者各自評分後比較差異。",
            ],
        ),
        page(
            "二、效果量",
            [
                "效果量用來描述兩組差異有多大，而不只是有沒有顯著差異。依常見的標準，0.2 算小、0.5 算中等、0.8 以上算大；"
                "樣本很大時，極小的差異也可能達到顯著，因此報告時應同時列出效果量。",
            ],
        ),
        page(
            "三、常模參照與標準參照",
            [
                "常模參照測驗把學生的分數和同儕比較，例如以百分等級呈現；標準參照測驗則對照事先訂好的標準，判斷學生是否達到"
                "精熟，例如駕照筆試只看是否達到及格分數，不看別人考得如何。",
            ],
        ),
    ],
)

DIFFERENTIATION = material(
    "EDU160_差異化教學投影片.pptx",
    [
        page(
            "名詞對照",
            [
                "差異化教學（differentiated instruction）",
                "鷹架（scaffolding）",
                "近側發展區（zone of proximal development）",
                "合作學習（cooperative learning）",
            ],
        ),
        page(
            "鷹架的提供與撤除",
            [
                "鷹架是學生還無法獨立完成任務時，教師提供的暫時支持，例如示範、提示卡或分段步驟。當學生逐漸能自己完成，"
                "教師應一步一步撤除支持，否則學生會一直依賴提示。",
            ],
        ),
        page(
            "近側發展區",
            [
                "近側發展區是指學生獨立能完成的程度，與在他人協助下能完成的程度之間的差距。教學應瞄準這個區間：太簡單學不到"
                "新東西，太難則即使有協助也無法完成。",
            ],
        ),
        page(
            "合作學習的分組",
            [
                "合作學習以四到五人的異質小組為原則，每位組員都有明確的角色與個人責任，例如記錄、報告、查證資料，並以小組"
                "整體表現與個人測驗共同計分，避免有人搭便車。",
            ],
        ),
        page(
            "差異化教學",
            [
                "差異化教學依學生的準備度、興趣與學習方式調整教學的內容、過程與成果，例如同一單元提供難度不同的學習單，"
                "並讓學生選擇以口頭報告或書面作業呈現學習成果。",
            ],
        ),
    ],
)

# (world, file, question language, question, [(gold fact, snippet of its paragraph)], coverage)
QUESTIONS = [
    (
        "bilingual-assessment",
        ASSESSMENT,
        "zh-hant",
        "形成性評量和總結性評量在實施時間和目的上有什麼不同？",
        [
            (
                "形成性評量在學生仍在學習時進行，告訴教師哪些內容要再教；總結性評量在單元或學期結束時進行，"
                "用來確認學生達成的程度。",
                "Formative assessment takes place while",
            )
        ],
        ["形成性評量的時間與目的", "總結性評量的時間與目的"],
    ),
    (
        "bilingual-assessment",
        ASSESSMENT,
        "zh-hant",
        "撰寫評分規準時，各個表現等級應該怎麼描述？",
        [
            (
                "評分規準的每個表現等級應以可觀察的行為描述，而不是「好」或「優秀」這類模糊的形容詞。",
                "describes each performance level",
            )
        ],
        ["以可觀察的行為描述等級", "避免模糊的形容詞"],
    ),
    (
        "bilingual-assessment",
        ASSESSMENT,
        "zh-hant",
        "同儕互評要怎麼安排，才能減少學生評分時的偏誤？",
        [
            (
                "同儕互評在學生以教師的評分規準評匿名作品、並先用範例文章校準時較公平，可減少人情偏誤與過嚴的評分。",
                "Peer assessment is fairer",
            )
        ],
        ["匿名並使用相同的評分規準", "先以範例校準"],
    ),
    (
        "bilingual-online",
        ONLINE,
        "zh-hant",
        "翻轉教室的課前影片建議多長？影片結尾應該安排什麼？",
        [
            (
                "翻轉教室的每支課前影片應少於十分鐘，並以兩到三個讓學生線上作答的問題結尾。",
                "under ten minutes",
            )
        ],
        ["影片長度", "影片結尾的問題"],
    ),
    (
        "bilingual-online",
        ONLINE,
        "zh-hant",
        "要怎麼提高學生在非同步討論區的參與度？",
        [
            (
                "每週一個具體提問、回覆須引用同學的發言、助教在 48 小時內回應，能提高非同步討論區的參與度。",
                "Participation in an asynchronous discussion forum",
            )
        ],
        ["每週具體的提問", "助教在 48 小時內回覆"],
    ),
    (
        "bilingual-online",
        ONLINE,
        "zh-hant",
        "根據認知負荷理論，上課投影片應該怎麼設計？",
        [
            (
                "認知負荷理論建議投影片不要以文字重複講者口述的內容，改用附少量標示的圖並口頭說明，並移除沒有內容的裝飾圖片。",
                "Cognitive load theory recommends",
            )
        ],
        ["不要把口述內容重複寫在投影片上", "移除裝飾性圖片"],
    ),
    (
        "bilingual-assessment",
        ASSESSMENT,
        "zh-hant",
        "自我評量在什麼情況下最有用？",
        [
            (
                "自我評量在學生必須為自評的每個等級指出作品中的證據時最有用。",
                "Self-assessment asks students",
            )
        ],
        ["學生須為自評的等級指出作品中的證據"],
    ),
    (
        "bilingual-statistics",
        STATISTICS,
        "en",
        "What is the difference between the reliability and the validity of a test?",
        [
            (
                "Reliability is the consistency of a test's results; validity is whether the test measures the ability "
                "it is meant to measure.",
                "信度指的是測驗結果的一致性",
            )
        ],
        ["reliability as consistency", "validity as measuring what is intended"],
    ),
    (
        "bilingual-statistics",
        STATISTICS,
        "en",
        "How large is an effect size of 0.5, and why should the effect size be reported besides significance?",
        [
            (
                "An effect size of 0.5 is medium by the usual standard; with large samples tiny differences can be "
                "significant, so the effect size should be reported too.",
                "效果量用來描述兩組差異有多大",
            )
        ],
        ["0.5 is a medium effect", "large samples make tiny differences significant"],
    ),
    (
        "bilingual-statistics",
        STATISTICS,
        "en",
        "How does a norm-referenced test differ from a criterion-referenced test?",
        [
            (
                "A norm-referenced test compares a student's score with peers; a criterion-referenced test compares it "
                "with a standard set in advance to judge mastery.",
                "常模參照測驗把學生的分數和同儕比較",
            )
        ],
        ["norm-referenced compares with peers", "criterion-referenced compares with a fixed standard"],
    ),
    (
        "bilingual-differentiation",
        DIFFERENTIATION,
        "en",
        "What is scaffolding, and when should the teacher take it away?",
        [
            (
                "Scaffolding is temporary support a teacher gives while students cannot yet do a task alone; it is "
                "removed step by step as they become able to do it themselves.",
                "鷹架是學生還無法獨立完成任務時",
            )
        ],
        ["temporary support", "removed step by step as students become independent"],
    ),
    (
        "bilingual-differentiation",
        DIFFERENTIATION,
        "en",
        "What does the zone of proximal development mean for choosing how hard a task should be?",
        [
            (
                "The zone of proximal development is the gap between what students can do alone and what they can do "
                "with help; teaching should aim at that gap.",
                "近側發展區是指學生獨立能完成的程度",
            )
        ],
        ["the gap between independent and assisted performance", "aim teaching at that gap"],
    ),
    (
        "bilingual-differentiation",
        DIFFERENTIATION,
        "en",
        "How should groups be formed in cooperative learning, and how is their work graded?",
        [
            (
                "Cooperative learning uses mixed groups of four to five with clear roles and individual accountability, "
                "graded on both group performance and individual tests.",
                "合作學習以四到五人的異質小組為原則",
            )
        ],
        ["heterogeneous groups of four to five", "group and individual scores combined"],
    ),
    (
        "bilingual-differentiation",
        DIFFERENTIATION,
        "en",
        "What can a teacher adjust in differentiated instruction?",
        [
            (
                "Differentiated instruction adjusts the content, process and products of teaching to students' "
                "readiness, interests and ways of learning.",
                "差異化教學依學生的準備度",
            )
        ],
        ["content, process and product", "by readiness, interest and learning profile"],
    ),
]


def items() -> list[dict]:
    out, numbers = [], {}
    for world, document, language, question, facts, coverage in QUESTIONS:
        key = (world, language)
        numbers[key] = numbers.get(key, 0) + 1
        prefix = "zh" if language == "zh-hant" else "en"
        out.append(
            item(
                f"{prefix}-course-{world}-{numbers[key]}",
                world,
                language,
                "course",
                question,
                [document],
                [fact(text, [at(document, snippet)]) for text, snippet in facts],
                coverage=coverage,
            )
        )
    return out
