// The manifest of the selection and saved-plan tests: stills from a CSV file (data-row
// fields to select by) times two styles, one clip per still (for_each), and posters.

export const selectYaml = (name: string, o: { posters?: string; stillsPrompt?: string } = {}) => `version: 1
name: ${name}
outputs: out
concurrency: 6
prices:
  video: { "720p": 0.07 }
  image: { "1k": 0.02 }
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
  image: { resolution: 1k }
jobs:
  stills:
    kind: image
    matrix:
      product: { rows: products.csv }
      style: [studio, street]
    prompt: "${o.stillsPrompt ?? "a {{ product.name }} in {{ style }} light"}"
  clips:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: start
    prompt: "@start turns slowly, {{ item.vars.style }} mood"
    settings: { duration: 5 }
  posters:
    kind: image
    matrix:
      size: [${o.posters ?? "small, large"}]
    prompt: "a poster, {{ size }}"
`;
