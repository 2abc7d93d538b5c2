// TEMPORARY: replaced by the real CLI.
int main() { return 0; }
