/**
 * Container or native: a small pure decision over what the two candidates offer, returning a reason
 * code; the sentence the plan prints is written from the code (strategySentence), so the choice can
 * be tested apart from its wording (issue 23 item 3).
 */
import type { Strategy } from "./types.js";

export type StrategyReason =
  | "asked"
  /** auto: the image would drop a pin the native venv keeps. */
  | "container-drops-pins"
  /** auto: the native venv would drop a pin the image keeps. */
  | "native-drops-pins"
  /** auto: an image runs here and is recent enough. */
  | "image-runs"
  /** auto: the newest image that runs is too far behind the native torch. */
  | "image-too-old"
  /** auto: images run here, but each brings a torch the project's pin excludes. */
  | "pin-excludes-images"
  /** auto: no image runs here. */
  | "no-image";

export type StrategyFailure =
  /** --strategy container, and no image runs here. */
  | "no-image-runs"
  /** --strategy container, images run but the pin excludes every one. */
  | "pin-excludes-every-image"
  /** --strategy native, and no build runs natively. */
  | "no-native-build"
  /** Neither runs. */
  | "nothing-runs";

export interface StrategyInputs {
  asked: Strategy | "auto";
  /** An image was chosen (it runs here and its torch satisfies the pin). */
  imageChosen: boolean;
  /** Images run here, but the torch pin excludes each. */
  pinExcludesImages: boolean;
  nativeChosen: boolean;
  /** Pins of the project each candidate would not obey. */
  containerDrops: number;
  nativeDrops: number;
  /** Minor releases the image's torch is behind the native one (Infinity across majors). */
  imageLag: number;
  maxImageLag: number;
}

type StrategyOutcome =
  { ok: true; strategy: Strategy; reason: StrategyReason } | { ok: false; failure: StrategyFailure };

export function decideStrategy(input: StrategyInputs): StrategyOutcome {
  if (input.asked === "container") {
    if (input.imageChosen) return { ok: true, strategy: "container", reason: "asked" };
    return { ok: false, failure: input.pinExcludesImages ? "pin-excludes-every-image" : "no-image-runs" };
  }
  if (input.asked === "native")
    return input.nativeChosen
      ? { ok: true, strategy: "native", reason: "asked" }
      : { ok: false, failure: "no-native-build" };
  // The plan that keeps every pin the project wrote wins.
  if (input.imageChosen && input.nativeChosen && input.containerDrops > 0 && input.nativeDrops === 0)
    return { ok: true, strategy: "native", reason: "container-drops-pins" };
  if (input.imageChosen && input.nativeChosen && input.nativeDrops > 0 && input.containerDrops === 0)
    return { ok: true, strategy: "container", reason: "native-drops-pins" };
  if (input.imageChosen && (input.imageLag <= input.maxImageLag || !input.nativeChosen))
    return { ok: true, strategy: "container", reason: "image-runs" };
  if (input.nativeChosen) {
    if (input.imageChosen) return { ok: true, strategy: "native", reason: "image-too-old" };
    return {
      ok: true,
      strategy: "native",
      reason: input.pinExcludesImages ? "pin-excludes-images" : "no-image",
    };
  }
  return { ok: false, failure: "nothing-runs" };
}
