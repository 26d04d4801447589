// What `omnibatch init` writes, as pure functions of a few names and paths: a starter
// manifest that runs on the emulator at once, its data file, the scheduled workflow and
// the .gitignore lines. examples/github/scheduled.yml is this workflow for another
// manifest (test/cli/init.test.ts keeps the two the same).

export interface ScaffoldNames {
  /** The manifest's `name` (also its file name, `<name>.yaml`). */
  readonly name: string;
  /** From the manifest's folder to the installed schema, e.g. ./node_modules/omnibatch/schemas/manifest.schema.json. */
  readonly schemaPath: string;
}

export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

export const starterManifest = ({ name, schemaPath }: ScaffoldNames): string => `# yaml-language-server: $schema=${schemaPath}
#
# A starter made by \`omnibatch init\`. Try it for free on the built-in emulator:
#   npx omnibatch run ${name}.yaml --emulate
# then check it and see what a real run would create and cost:
#   npx omnibatch validate ${name}.yaml
#   npx omnibatch plan ${name}.yaml
# A real run reads the API key from OMNIBATCH_API_KEY only. Commit this file, its data
# and ${name}.lock.json (the record of what was created and paid for).
version: 1
name: ${name}
outputs: outputs/${name}
concurrency: 2
budget: { max: 2, currency: USD }
prices:
  image: { "1k": 0.02 }
  video: { "720p": 0.07 }
defaults:
  image: { resolution: 1k }
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  stills:
    kind: image
    matrix:
      subject: { rows: data/${name}.csv }   # name, look
    prompt: "{{ subject.name }}, {{ subject.look }}, soft studio light"
    aspect_ratio: "1:1"
  clips:
    kind: video
    for_each: stills.outputs                 # one clip per image the stills job made
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly, gentle camera move"
`;

export const starterData = (): string => `name,look
a teapot,glazed blue ceramic
a desk lamp,brushed brass
`;

export interface WorkflowNames {
  /** Manifest path relative to the repository root, with forward slashes. */
  readonly manifest: string;
  readonly name: string;
  /** The manifest's outputs folder relative to the repository root, with forward slashes. */
  readonly outputs: string;
}

/** The scheduled workflow: every few hours, one run at a time per manifest, lockfile committed back, reports uploaded. */
export const scheduledWorkflow = ({ manifest, name, outputs }: WorkflowNames): string => `# Runs the ${name} batch on a schedule (made by \`omnibatch init\`). Each run submits,
# follows and downloads for up to max-wait, commits the lockfile back and uploads the
# reports. Work still pending (exit 3) leaves the job green with \`pending: true\`; the
# next scheduled run continues where this one stopped, never paying twice.
# Needs the secret OMNIBATCH_API_KEY (Settings > Secrets and variables > Actions).
# Results outlive the runner only in a store: set the variable OMNIBATCH_OUTPUTS to
# s3://bucket/prefix (AWS S3, R2, MinIO, GCS) and the store's settings below; without
# it, results live in the runner's cache and are lost once the service deletes them.
name: omnibatch ${name}

on:
  schedule:
    - cron: "17 */3 * * *"   # every 3 hours
  workflow_dispatch:

# Two runs of one manifest never overlap: a new one waits for the one in progress.
concurrency:
  group: omnibatch-${name}
  cancel-in-progress: false

permissions:
  contents: write   # to push the lockfile back

jobs:
  run:
    runs-on: ubuntu-latest
    timeout-minutes: 350
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-node@v5
        with:
          node-version: 22
          cache: npm
      - run: npm ci
      # Without a store: restore the results earlier runs downloaded, so this run fetches
      # only what is new (the service keeps results for 30 days). A cache can be evicted.
      - if: vars.OMNIBATCH_OUTPUTS == ''
        uses: actions/cache@v5
        with:
          path: ${outputs}
          key: omnibatch-${name}-\${{ github.run_id }}
          restore-keys: omnibatch-${name}-
      # The action of the omnibatch your package.json pins (elsewhere: uses: <owner>/omnibatch@v0).
      # With OIDC instead of keys (AWS): uses: aws-actions/configure-aws-credentials@v4
      # with role-to-assume and aws-region here, \`id-token: write\` in permissions, and no
      # AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY below.
      - id: omnibatch
        uses: ./node_modules/omnibatch
        env:
          # The store's settings (unused without OMNIBATCH_OUTPUTS). R2, MinIO and GCS
          # need the endpoint; AWS S3 needs only the region.
          AWS_ENDPOINT_URL_S3: \${{ vars.OMNIBATCH_S3_ENDPOINT }}
          AWS_REGION: \${{ vars.OMNIBATCH_S3_REGION }}
          AWS_ACCESS_KEY_ID: \${{ secrets.OMNIBATCH_S3_ACCESS_KEY_ID }}
          AWS_SECRET_ACCESS_KEY: \${{ secrets.OMNIBATCH_S3_SECRET_ACCESS_KEY }}
        with:
          manifest: ${manifest}
          api-key: \${{ secrets.OMNIBATCH_API_KEY }}
          outputs: \${{ vars.OMNIBATCH_OUTPUTS }}
          max-wait: 5h
          commit-lockfile: true
          upload: true
      # The action's outputs, for steps of your own (e.g. a notification when pending is false).
      - if: always()
        env:
          OUTCOME: \${{ steps.omnibatch.outputs.outcome }}
          PENDING: \${{ steps.omnibatch.outputs.pending }}
          CREATED: \${{ steps.omnibatch.outputs.created }}
          SPEND: \${{ steps.omnibatch.outputs.spend }}
        run: echo "outcome $OUTCOME, pending $PENDING, created $CREATED, spend $SPEND"
`;

/** The .gitignore lines: the emulated lockfiles, the emulated service's kept state and every outputs folder under the manifest's folder (`dir` relative to the repository root, "" for the root). */
export const gitignoreLines = (dir: string): string[] => {
  const prefix = dir === "" ? "" : `${dir.replace(/\/+$/, "")}/`;
  return ["*.emulate.lock.json", "*.emulate.lock.json.*", "*.emulate.state.json", "*.emulate.state.json.*", `/${prefix}outputs/`];
};
