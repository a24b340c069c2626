// echo — returns its input (a QuickJS tool used by the failure packs).
export default (input) => ({ echo: input });
