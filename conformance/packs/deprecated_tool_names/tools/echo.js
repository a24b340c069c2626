// echo — returns its input.
export default (input) => ({ echo: input });
