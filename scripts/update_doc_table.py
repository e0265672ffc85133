#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Replace the text between <!-- NAME:begin ... --> and <!-- NAME:end --> in a doc
with the contents of a generated file, so measured tables are never typed by hand.
Usage: update_doc_table.py DOC NAME GENERATED_FILE"""
import pathlib
import re
import sys

doc, name, gen = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
text = doc.read_text()
pat = re.compile(r"(<!-- %s:begin[^>]*-->\n).*?(<!-- %s:end -->)" % (name, name), re.S)
if not pat.search(text):
    sys.exit(f"{doc}: no {name}:begin/end markers")
doc.write_text(pat.sub(lambda m: m.group(1) + gen.read_text() + m.group(2), text))
