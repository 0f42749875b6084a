"""Sample course materials for the demo channel `demo-course` (教育資料科學導論, EDS101).

The text is written for this project (no third-party content) and is built into a PDF, a DOCX and
a PPTX in code, byte-for-byte the same on every run, so the content hash makes a second
`load_demo_data` a no-op. The files go through the same upload service as a teacher's uploads
and are indexed synchronously.

The PDF uses reportlab's built-in CID font MSung-Light for Traditional Chinese: it is not
embedded (viewers substitute a local Ming/Song font), but the text layer is standard Unicode, so
extraction and search work everywhere.
"""

from __future__ import annotations

import io
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile

PDF_NAME = "EDS101_week1-4_handout.pdf"
DOCX_NAME = "EDS101_資料倫理與IRB講義.docx"
PPTX_NAME = "EDS101_Bloom與RAG投影片.pptx"

# One PDF page per week: (title, paragraphs).
HANDOUT_PAGES = [
    (
        "Week 1 · Learning analytics 學習分析導論",
        [
            "Learning analytics is the measurement, collection, analysis and reporting of data about learners "
            "and their contexts, for the purpose of understanding and improving learning and the environments "
            "in which it occurs. In this course we treat it as a cycle: learners generate data, the data become "
            "metrics, metrics inform an intervention, and the intervention changes how learners act.",
            "學習分析（learning analytics）是蒐集、分析並回報學習者及其情境資料的做法，目的是理解並改善學習。"
            "常見的資料來源包括學習管理系統的點擊紀錄、作業繳交時間、測驗作答歷程與討論區發言。"
            "單一指標很少足以判斷學習狀況：登入次數多不代表理解深入，因此分析結果應與教師的專業判斷互相印證。",
            "A typical early-warning dashboard combines three signals: assignment submission, quiz performance and "
            "activity in the learning management system. Predictions are probabilities, not verdicts; a student "
            "flagged as at risk should be offered support, never penalised because of the flag.",
        ],
    ),
    (
        "Week 2 · Bloom's taxonomy Bloom 認知層次",
        [
            "The revised Bloom's taxonomy (Anderson and Krathwohl, 2001) orders cognitive processes from lower to "
            "higher order: Remember, Understand, Apply, Analyze, Evaluate and Create. Teachers use it to write "
            "learning objectives and to check that assessments do not test only recall.",
            "修訂版 Bloom 認知層次由低到高分為：記憶、理解、應用、分析、評鑑、創造。"
            "在本平台中，系統會把學生提問歸類到某一層次，協助教師觀察全班的提問是否停留在記憶與理解，"
            "或已進入分析與評鑑。分類結果僅供教學參考，不作為評分依據。",
            "Example questions: 'What is a learning management system?' is Remember; 'Compare two dropout "
            "prediction models and justify which one the school should adopt' is Evaluate.",
        ],
    ),
    (
        "Week 3 · Data ethics and the IRB 資料倫理與 IRB",
        [
            "Research with student data needs review by an Institutional Review Board (IRB) before data are "
            "collected. The board checks informed consent, risks and benefits, data minimisation, and how the "
            "data will be stored, de-identified and eventually deleted.",
            "使用學生資料進行研究前，必須先通過研究倫理審查委員會（IRB）的審查。"
            "審查重點包括：知情同意是否清楚、研究風險與效益是否相稱、是否只蒐集必要的資料，"
            "以及資料如何儲存、去識別化與銷毀。未成年受試者還需要法定代理人同意。",
            "De-identification removes direct identifiers such as names and student numbers, but combinations of "
            "quasi-identifiers (department, year, gender) can still re-identify a person in a small class. "
            "Report aggregates only when every cell holds enough students.",
        ],
    ),
    (
        "Week 4 · Retrieval-augmented generation 檢索增強生成",
        [
            "Retrieval-augmented generation (RAG) answers a question in two steps: first retrieve passages from a "
            "trusted collection, then let a language model write an answer grounded in those passages, citing "
            "each one. Retrieval quality bounds answer quality: a passage that is not retrieved cannot be cited.",
            "檢索增強生成（RAG）先從可信的資料集合中找出相關段落，再讓語言模型根據這些段落作答並標示出處。"
            "本課程的頻道教材會被切分成段落、轉成向量並存入 pgvector，搜尋時同時使用向量相似度與關鍵詞比對，"
            "再以倒數排名融合（RRF）合併兩種結果。",
            "Hybrid retrieval matters for Chinese: an English embedding model sees most Han characters as unknown "
            "tokens, while keyword matching on character bigrams still finds exact terms such as 倒數排名融合.",
        ],
    ),
]

# The DOCX: (heading, paragraphs) sections; a heading starts each section (§ 1, § 2, …).
ETHICS_SECTIONS = [
    (
        "一、為什麼教育資料需要倫理規範",
        [
            "教育資料記錄了學生的學習歷程、成績與行為，一旦外洩或被誤用，可能影響學生的升學與名譽。"
            "因此在蒐集與分析之前，研究者必須說明目的、範圍與保存期限，並取得適當的同意。",
            "Educational records are personal data. Collect only what the research question needs, and decide "
            "in advance who may see the raw data.",
        ],
    ),
    (
        "二、IRB 審查流程",
        [
            "研究計畫需送交研究倫理審查委員會（IRB）。一般流程為：準備研究計畫書與知情同意書、線上送審、"
            "委員審查並提出修正意見、研究者回覆修正、取得核准後才能開始蒐集資料。",
            "依風險程度分為免除審查、簡易審查與一般審查。僅使用已去識別化的既有教學資料，通常可申請簡易審查；"
            "涉及未成年人或敏感資料時，多需一般審查。",
            "Keep the approval letter and protocol number; the platform's research export asks for the IRB "
            "protocol number before it releases any data.",
        ],
    ),
    (
        "三、知情同意與去識別化",
        [
            "知情同意書應以受試者能理解的語言說明：研究目的、資料用途、可能風險、可隨時退出且不影響成績。"
            "教師兼研究者時，應由第三方收取同意書，避免學生感到壓力。",
            "去識別化應移除姓名、學號與電子郵件，並以研究代碼取代；代碼對照表須與研究資料分開保存。"
            "小班級中若同時公開系級、性別等資訊，仍可能推回個人，報表應只呈現足夠人數的彙總結果。",
        ],
    ),
    (
        "四、課堂練習",
        [
            "請判斷：教師為改進自己的教學而分析本班匿名問卷，是否需要 IRB 審查？若打算將結果投稿期刊，答案是否改變？",
        ],
    ),
]

# A table at the end of the last section (DOCX tables are extracted row by row, cells joined by "|").
EXERCISE_TABLE = [
    ("情境", "是否需要 IRB"),
    ("改進自己教學的匿名問卷", "通常不需要"),
    ("將學生資料投稿發表", "需要"),
]

# The PPTX: (title, bullet lines, speaker notes) per slide.
SLIDES = [
    (
        "Bloom 認知層次與 AI 助教",
        ["記憶 Remember → 理解 Understand → 應用 Apply", "分析 Analyze → 評鑑 Evaluate → 創造 Create"],
        "說明：平台會自動判斷學生提問的 Bloom 層次，教師可以從儀表板看到全班提問的分布。",
    ),
    (
        "Writing objectives with Bloom's taxonomy",
        [
            "Use one measurable verb per objective: list, explain, apply, compare, judge, design",
            "Match the assessment to the level: a multiple-choice quiz rarely measures Create",
        ],
        "Ask students to rewrite a Remember-level objective as an Analyze-level one.",
    ),
    (
        "什麼是檢索增強生成（RAG）",
        [
            "先檢索：從頻道教材找出相關段落",
            "再生成：語言模型根據段落作答並附上引用",
            "沒有被檢索到的段落就無法被引用",
        ],
        "強調引用的重要性：每一句主張都要能回到原始段落。",
    ),
    (
        "The RAG pipeline in this course",
        [
            "Extract text with page and slide numbers",
            "Split into overlapping chunks at sentence ends (。！？ and . ! ?)",
            "Embed each chunk and store it in pgvector with an HNSW index",
            "Hybrid search: vector similarity + full-text on character bigrams, fused with reciprocal rank fusion",
        ],
        "Reciprocal rank fusion adds 1/(60 + rank) from each ranking, so a passage found by both rises to the top.",
    ),
    (
        "評估檢索品質",
        [
            "Recall@10：正確段落是否出現在前十名",
            "引用正確率：答案中的引用是否真的支持該句",
            "中文關鍵詞查詢要另外測試",
        ],
        "練習：用「倒數排名融合」與「去識別化」各查一次，比較向量搜尋與關鍵詞搜尋的結果。",
    ),
]


def build_pdf() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer

    pdfmetrics.registerFont(UnicodeCIDFont("MSung-Light"))
    title = ParagraphStyle("title", fontName="MSung-Light", fontSize=16, leading=22, spaceAfter=10)
    body = ParagraphStyle(
        "body", fontName="MSung-Light", fontSize=11, leading=17, spaceAfter=8, wordWrap="CJK"
    )
    story = []
    for number, (heading, paragraphs) in enumerate(HANDOUT_PAGES):
        if number:
            story.append(PageBreak())
        story.append(Paragraph(heading, title))
        story.append(Spacer(1, 4))
        story.extend(Paragraph(text, body) for text in paragraphs)
    buffer = io.BytesIO()
    # invariant=1: no creation date or random document id, so the bytes (and the hash) never change.
    SimpleDocTemplate(
        buffer,
        pagesize=A4,
        invariant=1,
        title="EDS101 Handout",
        author="Uedu demo",
        leftMargin=60,
        rightMargin=60,
    ).build(story)
    return buffer.getvalue()


def _fixed_zip(data: bytes) -> bytes:
    """Rewrite an Office ZIP with fixed timestamps: python-docx/-pptx stamp entries with the time."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            target.writestr(
                zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0)),
                source.read(info.filename),
                compress_type=zipfile.ZIP_DEFLATED,
            )
    return out.getvalue()


def _fixed_core_properties(properties) -> None:
    import datetime

    moment = datetime.datetime(2026, 1, 1)
    properties.author = properties.last_modified_by = "Uedu demo"
    properties.created = properties.modified = moment
    properties.revision = 1


def build_docx() -> bytes:
    import docx

    document = docx.Document()
    _fixed_core_properties(document.core_properties)
    document.core_properties.title = "資料倫理與 IRB 講義"
    document.add_heading("EDS101 資料倫理與 IRB 講義", level=0)
    for heading, paragraphs in ETHICS_SECTIONS:
        document.add_heading(heading, level=1)
        for text in paragraphs:
            document.add_paragraph(text)
    table = document.add_table(rows=len(EXERCISE_TABLE), cols=2)
    for row, cells in zip(table.rows, EXERCISE_TABLE):
        row.cells[0].text, row.cells[1].text = cells
    buffer = io.BytesIO()
    document.save(buffer)
    return _fixed_zip(buffer.getvalue())


def build_pptx() -> bytes:
    from pptx import Presentation

    presentation = Presentation()
    _fixed_core_properties(presentation.core_properties)
    layout = presentation.slide_layouts[1]  # title and content
    for title, bullets, notes in SLIDES:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        frame = slide.placeholders[1].text_frame
        frame.text = bullets[0]
        for line in bullets[1:]:
            frame.add_paragraph().text = line
        slide.notes_slide.notes_text_frame.text = notes
    buffer = io.BytesIO()
    presentation.save(buffer)
    return _fixed_zip(buffer.getvalue())


def load_demo_materials(stdout) -> None:
    from .materials import index_material, material_upload
    from .models import Channel, Material

    channel = Channel.objects.filter(slug="demo-course").first()
    if channel is None:
        return
    for name, build in ((PDF_NAME, build_pdf), (DOCX_NAME, build_docx), (PPTX_NAME, build_pptx)):
        upload = SimpleUploadedFile(name, build())
        material, created = material_upload(
            channel=channel, user=channel.owner, uploaded_file=upload, enqueue=False
        )
        if material.status != Material.Status.READY and material.file:
            # Index here, not in a worker: the demo must be searchable as soon as the command ends
            # (and a previous run that failed, e.g. without the model, is retried).
            Material.objects.filter(pk=material.pk).update(status=Material.Status.PENDING)
            material = index_material(material.pk) or material
        state = "added" if created else "already present"
        stdout.write(
            f"  material {material.original_name}: {state}, {material.status}, {material.chunk_count} passages"
        )
