#!/usr/bin/env bash
# Regenerates the screenshots (README.md, docs/REPORTS.md) of `tracegate analyze --html`: three real traces at 1400
# and 800 px wide in headless Chromium, quantized with pngquant when it is installed.
# Usage: docs/img/make_screenshots.sh [TRACEGATE]   (from the repository root; needs ../shared/traces)
set -euo pipefail
tg=${1:-build/tracegate}
out=docs/img
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tg=$(cd "$(dirname "$tg")" && pwd)/$(basename "$tg")
# The traces under their own names in one folder: the pages show "Trace nsys_2gpu_export.sqlite".
gunzip -c tests/fixtures/gpu/resnet50_eager_b32.db.gz >"$tmp/resnet50_eager_b32.db"
ln -s "$(pwd)/../shared/traces/nsys_2gpu_export.sqlite" "$(pwd)/../shared/traces/kineto_nccl_allreduce_rank0.json.gz" "$tmp/"
declare -A traces=(
  [nsys_2gpu]=nsys_2gpu_export.sqlite
  [kineto_nccl]=kineto_nccl_allreduce_rank0.json.gz
  [resnet50_eager_h200]=resnet50_eager_b32.db
)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
for name in "${!traces[@]}"; do
  batch=1; [ "$name" = resnet50_eager_h200 ] && batch=32  # the recording ran batches of 32 images
  (cd "$tmp" && "$tg" analyze "${traces[$name]}" -q --batch "$batch" --html "$name.html")
  for width in 1400 800; do
    png="$out/analyze_${name}_${width}.png"
    timeout 120 "$browser" --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --hide-scrollbars \
      --user-data-dir="$tmp/profile" --window-size=$width,2300 --screenshot="$png" "file://$tmp/$name.html" 2>/dev/null
    if command -v pngquant >/dev/null; then pngquant --force --skip-if-larger --quality 60-85 --output "$png" "$png" || true; fi
    echo "$png: $(( $(stat -c %s "$png") / 1024 )) KiB"
  done
done
