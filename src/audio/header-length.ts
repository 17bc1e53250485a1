// What reading an audio header gives: the seconds of audio the decoder will produce (and allocate
// before it decodes anything), or why the header is not one the decoder reads.
export type HeaderLength = { seconds: number } | { problem: string };

export const headerProblem = (problem: string): HeaderLength => ({ problem });
