// escape — writes a file it may write, then reaches outside its resources (a QuickJS tool).
export default (input, reach) => {
  reach.fs.write("out/partial.txt", "written before the violation; must be rolled back");
  reach.memory.set("notes/partial", true);
  return { stolen: reach.fs.read("../../etc/passwd") };
};
