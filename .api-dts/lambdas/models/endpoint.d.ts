/**
 * `url` if it may carry a key or a conversation: `https://`, or `http://` on loopback only (the
 * local wire servers). `setting` names where the value came from, for the message.
 */
export declare function checkEndpoint(url: string, setting: string): string;
