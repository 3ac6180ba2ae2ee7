/* SPDX-License-Identifier: MIT */
/* The library's function: called 300 times by twigs. */
static volatile int sink;

void twig(int i);

void twig(int i)
{
	int k;

	for (k = 0; k < i; k++)
		sink += k;
}
