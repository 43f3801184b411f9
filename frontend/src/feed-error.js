// The error of a feed message that does not follow the protocol (docs/feed-protocol.md), for the decoders. Pure.

/** A feed message that does not follow the protocol. */
export class FeedFormatError extends Error {
  constructor(message) {
    super(message);
    this.name = "FeedFormatError";
  }
}

/**
 * Throw a FeedFormatError.
 * @param {string} message names the first field that does not follow the protocol
 * @returns {never}
 */
export function fail(message) {
  throw new FeedFormatError(message);
}
