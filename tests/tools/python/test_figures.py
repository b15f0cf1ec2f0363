"""Unit tests of ckptfs_tools.figures: sizes, medians of ratios, missed-by."""

import unittest

from ckptfs_tools import figures


class FiguresTest(unittest.TestCase):
    def test_sizes_in_every_spelling_the_tools_use(self):
        cases = {"4096": 4096, "4096B": 4096, "64K": 65536, "64k": 65536, "512M": 512 << 20, "4G": 4 << 30,
                 "4GiB": 4 << 30, "4GB": 4 << 30, "1TiB": 1 << 40, " 8M ": 8 << 20}
        for text, want in cases.items():
            self.assertEqual(figures.parse_size(text), want, text)
        for bad in ("", "G", "4X", "4.5G", "-4G", "4iB", "4 GiBs"):
            with self.assertRaises(ValueError, msg=bad):
                figures.parse_size(bad)

    def test_median_ratio_is_the_median_of_per_round_ratios(self):
        # Rounds 2x apart: per-round ratios 1.0, 1.0, 2.0 -> 1.0; a ratio of
        # medians would say 20/10 = 2.0.
        self.assertEqual(figures.median_ratio([10, 20, 40], [10, 20, 20]), 1.0)
        self.assertEqual(figures.median_ratio([1.0, 3.0], [1.0, 1.0]), 2.0)

    def test_rounds_not_measured_are_left_out(self):
        self.assertEqual(figures.median_ratio([None, 3.0, 2.0], [1.0, 0, 1.0]), 2.0)
        self.assertIsNone(figures.median_ratio([None], [1.0]))
        self.assertIsNone(figures.median([]))
        self.assertEqual(figures.median([None, 1.0, 5.0, 3.0]), 3.0)

    def test_missed_by_says_how_far_and_the_factor_needed(self):
        self.assertEqual(figures.missed_by(0.45, 0.9, ">="), "50% short (needs ×2.00)")
        self.assertEqual(figures.missed_by(1.5, 1.0, "<="), "50% over (needs ×0.67)")
        self.assertEqual(figures.missed_by(1.2, 0.0, "<="), "1.20x against 0.00x")

    def test_meets(self):
        self.assertTrue(figures.meets(1.0, 1.0, ">="))
        self.assertFalse(figures.meets(1.0, 1.0, ">"))
        self.assertTrue(figures.meets(0.5, 1.0, "<="))

    def test_rates(self):
        self.assertEqual(figures.gb_per_s(3e9, 2.0), 1.5)
        self.assertIsNone(figures.gb_per_s(3e9, 0))
        self.assertEqual(figures.f3(None), "n/a")
        self.assertEqual(figures.f3(1.23456), "1.235")


if __name__ == "__main__":
    unittest.main()
