"""The one style sheet of the pages the product writes (the session report, the sweep's
page): inline, so a page fetches nothing."""

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em 2em;color:#222}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.4em .6em;margin:.2em 0}
pre{max-height:24em;overflow:auto}
.volley{border-left:4px solid #9467bd;padding-left:.8em;margin:1.2em 0}
.round{color:#777;border-top:1px dashed #bbb;margin:.6em 0 .2em;font-size:.85em}
.msg{margin:.3em 0}.head{font-family:ui-monospace,monospace;font-size:.9em}
.dropped{color:#b22}.summarized{color:#a60}.inserted{color:#282}.edited{color:#26a}
.note{color:#555}details{margin:.5em 0}summary{cursor:pointer}
tr.parts td{color:#555;font-size:.9em;border-top:none}
svg text{font:11px system-ui,sans-serif}
"""
