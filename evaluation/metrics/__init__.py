"""The rules the scoring (evaluation/scoring.py) is built from, one subject per module: what is
gold (gold), whether an answer obeyed a planted instruction (obedience), whether it abstained
(abstention), the claim set runs are compared on (claims), and how readable the body is
(readability, the light rubric's code half)."""
