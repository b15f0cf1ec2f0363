"""Unit tests of ckptfs_tools.bench_all's arithmetic."""

import unittest

from ckptfs_tools import bench_all


class BenchAllTest(unittest.TestCase):
    def test_fill_store_holds_four_checkpoints_at_about_87_percent(self):
        ckpt = 1_700_000_000
        mib = bench_all.fill_store_mib(ckpt)
        segments = -(-ckpt * 4 // int(0.87 * 2**25))
        self.assertGreater(mib, segments * 32)
        # 4 checkpoints over the data segments: about 87%.
        data_mib = mib - 64 - (max(2, segments // 64) + max(2, segments // 128)) * 32
        self.assertAlmostEqual(ckpt * 4 / (data_mib * 2**20), 0.87, delta=0.01)

    def test_memory_budget_from_the_mount_options(self):
        self.assertEqual(bench_all.memory_budget(""), 512 << 20)
        self.assertEqual(bench_all.memory_budget("compress=zstd:-3,memory=1G"), 1 << 30)
        self.assertEqual(bench_all.memory_budget("memory=768MiB,uring=on"), 768 << 20)
        self.assertEqual(bench_all.memory_budget("memory=lots"), 512 << 20)

    def test_reader_size_splits_the_limit_among_8_readers(self):
        self.assertEqual(bench_all.reader_size("4G"), 512 << 20)

    def test_target_rows(self):
        met = bench_all.target_row("restore", 1.1, ">=", 1.0, "1.1 / 1.0 GB/s")
        self.assertEqual((met["result"], met["missed_by"], met["measured"]), ("met", "—", "1.10x (1.1 / 1.0 GB/s)"))
        missed = bench_all.target_row("cpu", 1.5, "<=", 1.0)
        self.assertEqual(missed["result"], "missed")
        self.assertIn("needs ×0.67", missed["missed_by"])
        self.assertEqual(missed["required"], "≤ 1.00x")
        self.assertEqual(bench_all.target_row("mmap", 0.8, "info", 0)["result"], "info")
        self.assertEqual(bench_all.target_row("x", None, ">=", 1.0)["result"], "n/a")

    def test_rounds_give_medians_of_ratios(self):
        rounds = bench_all.Rounds([{"a": 2.0, "b": 1.0}, {"a": 3.0, "b": 3.0}, {"a": None, "b": 1.0}])
        self.assertEqual(rounds.ratio("a", "b"), 1.5)
        self.assertEqual(rounds.median("b"), 1.0)
        self.assertIsNone(rounds.median("missing"))

    def test_fill_pass_rates_by_epoch_label(self):
        phases = [{"label": "epoch 1 checkpoint 1", "bytes": 2e9, "seconds": 1.0},
                  {"label": "epoch 1 checkpoint 2", "bytes": 2e9, "seconds": 3.0},
                  {"label": "epoch 2 checkpoint 1", "bytes": 1e9, "seconds": 1.0},
                  {"label": "warm-up", "bytes": 1e9, "seconds": 1.0}]
        self.assertEqual(bench_all.fill_pass_rates(phases), {1: 1.0, 2: 1.0})


if __name__ == "__main__":
    unittest.main()
