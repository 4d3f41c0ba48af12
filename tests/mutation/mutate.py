"""Replaces one exact text in a file (a mutation of tests/mutation/*.sh);
fails when the text is not there, so a mutation cannot silently miss.

    python3 mutate.py FILE ORIGINAL REPLACEMENT
"""
import sys

path, original, replacement = sys.argv[1:]
text = open(path).read()
if original not in text:
    sys.exit(f"mutation target not found in {path}: {original}")
open(path, "w").write(text.replace(original, replacement))
