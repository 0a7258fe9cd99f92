// What the leak checks of the JavaScript tests compare: bp.memory()'s live tensors and their bytes. (Its heap
// fields also move with caches that fill on first use; the tests that mean the heap check those themselves.)
export const liveTensors = (bp) => {
  const { tensors, bytes } = bp.memory();
  return { tensors, bytes };
};
