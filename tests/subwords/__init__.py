"""Tests of hsw2v.subwords: the n-grams against fastText, and composed and unseen
words' vectors."""
