/**
 * AWS's rules the local twin enforces, one row each: what AWS does, the page of AWS's
 * documentation that says so, the file of local/aws/ that holds the rule (the page is linked at its
 * top), the test that fails when the twin breaks it, and what AWS answers when the rule refuses
 * (the error code, or for a bound that refuses nothing the field it bounds), which both the file and
 * the test name. A new rule is a file here, a row, and its test: test/local/aws-rules.test.ts holds
 * the table, the files and the tests to each other.
 */
export interface AwsRule {
    /** What AWS does, in a sentence. */
    readonly rule: string;
    /** The page of AWS's documentation that states it. */
    readonly doc: string;
    /** The file that holds it (repository-relative, under local/aws/). */
    readonly file: string;
    /** The test that holds the twin to it (repository-relative). */
    readonly test: string;
    /** What AWS answers when the rule refuses, or the field a bound bounds: named by the file and by the test. */
    readonly answer: string;
}
export declare const AWS_RULES: readonly AwsRule[];
/** The files of local/aws/ that hold no rule of their own, and what they are instead. */
export declare const AWS_RULE_SUPPORT: Readonly<Record<string, string>>;
