"""Reading and writing jobs and what they produced; every function takes a Session."""
