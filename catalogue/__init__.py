"""The Uedu catalogue: universities, courses, high-school curriculum, research clusters, advisors
and their papers, Uedu team papers and internal platform documents. The research tools read it
(tier "internal": Uedu's own data)."""
