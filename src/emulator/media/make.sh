#!/bin/sh
# Regenerates the emulator's committed output videos: for each ratio (16:9 1280x720,
# 9:16 720x1280, 1:1 720x720) and each whole duration 3..10 s, an H.264 MP4 at 24 fps
# of one solid colour, plus a watermarked copy with a white band across the lower part.
# Outputs are at least 700 px per side so they pass the service's reference-video rules
# when a manifest chains them into a later job. Needs ffmpeg (5.x); run from anywhere:
#   sh src/emulator/media/make.sh
set -eu
cd "$(dirname "$0")"
FF="ffmpeg -hide_banner -loglevel error -y"
# No SEI (x264 writes its settings there, ~700 bytes) and no metadata: smaller and
# byte-identical on every run.
ENC="-c:v libx264 -preset ultrafast -crf 51 -g 300 -pix_fmt yuv420p -bsf:v filter_units=remove_types=6 -map_metadata -1 -fflags +bitexact -movflags +faststart"
for ratio in 16x9:1280x720 9x16:720x1280 1x1:720x720; do
  name=${ratio%%:*}
  size=${ratio#*:}
  for d in 3 4 5 6 7 8 9 10; do
    $FF -f lavfi -i "color=c=0x2a4d8f:s=$size:r=24:d=$d" $ENC "video_${name}_${d}s.mp4"
    $FF -f lavfi -i "color=c=0x2a4d8f:s=$size:r=24:d=$d" \
      -vf "drawbox=x=0:y=ih*0.78:w=iw:h=ih*0.14:color=white:t=fill" $ENC "video_${name}_${d}s_wm.mp4"
  done
done
# A short silent MP3 is not needed: OutputMedia.ts writes silent MP3 frames itself.
