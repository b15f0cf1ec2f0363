"""python3 -m ckptfs_tools.ceph_dev_cluster VERB DIR ...: see cli."""

import sys

from ckptfs_tools.ceph_dev_cluster.cli import main

sys.exit(main())
