// The spec's input rules and media probing, as pure functions shared by the emulator
// (which answers violations as error envelopes) and preflight (which maps them to
// manifest positions).

export type { Violation } from "./Violation.js";
export { violation } from "./Violation.js";
export type { ElementInfo, RuleContext } from "./RuleContext.js";
export type { ImageInfo, ProbeFailure, VideoInfo } from "./MediaInfo.js";
export { checkVideoCreate } from "./videoCreate.js";
export { checkImageCreate } from "./imageCreate.js";
export { checkCursorQuery, checkImageList, checkTaskQuery } from "./queries.js";
export { probeImage } from "./probeImage.js";
export { probeVideo, probeVideoHeader } from "./probeVideo.js";
export { checkImageMedia, checkVideoMedia, describeProbeFailure } from "./mediaRules.js";
export { DEFAULT_SERVICE, SPEC_SERVICE, SERVICE_NAME, VIDEO_MODEL_NAME, defaultVideoModel, foreignVideoModel, imageModelNames, serviceInEnv, suggestModel } from "./serviceNames.js";
