/* bad.c: cites docs/architecture.md §1, §7 and docs/missing.md (test_docs_detects). */
